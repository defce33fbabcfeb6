//! What the side-by-side benches (`peers`, `timeseries_peers`) share: the
//! redis-server they start, the raw meta-protocol socket that is the floor
//! and the round-trip probe, and the interleaved rounds of arms with their
//! medians.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use mcds_testkit::{MemcachedServer, spawn_tied};

/// The median of `v` (the upper one of an even count); panics on an empty
/// `v`.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `x` rounded, with thousands separators: `1,234,567`.
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------
// The floor: a raw socket speaking the meta protocol.

/// One TCP connection to memcached that writes prepared meta commands and
/// reads their replies, with nothing in between.
pub struct Raw {
    stream: TcpStream,
    buf: Box<[u8; 64 * 1024]>,
}

impl Raw {
    /// Connect to memcached at `addr` (`host:port`); panics if it cannot.
    pub fn connect(addr: &str) -> Raw {
        let stream = TcpStream::connect(addr).expect("raw socket to memcached");
        stream.set_nodelay(true).unwrap();
        // A malformed exchange fails the bench instead of hanging it.
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Raw {
            stream,
            buf: Box::new([0; 64 * 1024]),
        }
    }

    /// Send `commands` (one write) and read `replies` `VA` replies (two
    /// lines each); the value of the last one.
    pub fn exchange(&mut self, commands: &[u8], replies: usize) -> u64 {
        self.stream.write_all(commands).unwrap();
        let mut len = 0;
        let mut lines = 0;
        while lines < 2 * replies {
            let n = self.stream.read(&mut self.buf[len..]).unwrap();
            assert!(n > 0, "memcached closed the raw socket");
            lines += self.buf[len..len + n]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            len += n;
        }
        let reply = &self.buf[..len];
        assert!(
            reply.starts_with(b"VA "),
            "{}",
            String::from_utf8_lossy(reply)
        );
        let last = reply[..len - 2].rsplit(|&b| b == b'\n').next().unwrap();
        std::str::from_utf8(last).unwrap().parse().unwrap()
    }
}

impl Raw {
    /// Send `commands` (one write) and read `replies` replies that may
    /// carry a value (`VA <length> …`, then the value and `\r\n`; a
    /// miss is one line): the bytes of the values read. Values are
    /// skipped by their length, not scanned for line ends.
    pub fn exchange_values(&mut self, commands: &[u8], replies: usize) -> usize {
        self.stream.write_all(commands).unwrap();
        let (mut len, mut at, mut done, mut bytes) = (0, 0, 0, 0);
        loop {
            while done < replies {
                let Some(nl) = self.buf[at..len].iter().position(|&b| b == b'\n') else {
                    break;
                };
                let line = &self.buf[at..at + nl];
                let value = line.strip_prefix(b"VA ").map(|rest| {
                    let digits = rest.split(|&b| b == b' ' || b == b'\r').next().unwrap();
                    std::str::from_utf8(digits)
                        .unwrap()
                        .parse::<usize>()
                        .unwrap()
                });
                let need = nl + 1 + value.map_or(0, |v| v + 2);
                if at + need > len {
                    break;
                }
                at += need;
                done += 1;
                bytes += value.unwrap_or(0);
            }
            if done == replies {
                return bytes;
            }
            // Keep the part of a reply read so far at the buffer's start.
            self.buf.copy_within(at..len, 0);
            len -= at;
            at = 0;
            assert!(len < self.buf.len(), "a reply larger than the raw buffer");
            let n = self.stream.read(&mut self.buf[len..]).unwrap();
            assert!(n > 0, "memcached closed the raw socket");
            len += n;
        }
    }
}

/// `ma <key> N0 J1 D1 v` for each key, concatenated: what
/// `Counter::incr(1)` asks of memcached (add 1, or create the counter at 1
/// if it is missing; `N0`, no TTL), without the opaque (`O<n>`) mcds adds
/// to match each reply to its request. Use keys of the counters' shape
/// ([`counter_keys`]), so the floor sends as many bytes as mcds, less the
/// opaque.
pub fn ma_incr(keys: &[String]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| format!("ma {k} N0 J1 D1 v\r\n").into_bytes())
        .collect()
}

/// `n` keys shaped as a `Counter` named `<name><i>` stores its value
/// under (`counter:<name><i>:value`). Pick `name` as long as the mcds
/// arm's counter names, so both send the same number of key bytes.
pub fn counter_keys(name: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("counter:{name}{i}:value")).collect()
}

/// Create each key at 0 (`ma <key> N0 J0 D0 v`: on a miss, create it with
/// the initial value and return that).
pub fn ma_create(raw: &mut Raw, keys: &[String]) {
    let commands: Vec<u8> = keys
        .iter()
        .flat_map(|k| format!("ma {k} N0 J0 D0 v\r\n").into_bytes())
        .collect();
    raw.exchange(&commands, keys.len());
}

// ---------------------------------------------------------------------------
// The VM's timing mode, held fast for the run.

/// Held for a run: the CPUs' idle states limited to polling, through
/// Linux's PM QoS interface (`/dev/cpu_dma_latency` holds a latency bound
/// while the file is open; 0 means "never sleep deeper than polling").
///
/// Why: this VM's idle driver (`haltpoll`) halts an idle vCPU after an
/// adaptive poll window, and waking a halted vCPU costs tens of µs. A
/// loopback round trip then takes ~7.5–13 µs while the CPUs stay busy and
/// 30–60 µs once they halt, and which one an arm gets flips from round to
/// round: single-caller arms measured the VM, not the client (a
/// one-caller round of mcds at 75k ops/s next to a raw-socket round at
/// 26k, and the next round the other way round). With the bound held,
/// every round of every arm runs in the fast mode (51 of 51 rounds under
/// 25 µs), so the ratios compare the clients. This is what `tuned`'s
/// latency-performance profile does; every arm, mcds's and its peers',
/// runs under the same bound.
///
/// Needs root (the file is `0600`); without it, or with
/// `$PEERS_IDLE` set, nothing is held and [`mode_line`] says which modes
/// the run met. Dropping the value releases the bound.
pub struct FastMode(Option<std::fs::File>);

impl FastMode {
    /// Hold the bound (see [`FastMode`]), printing whether it is held.
    pub fn hold() -> FastMode {
        if std::env::var_os("PEERS_IDLE").is_some() {
            println!("CPU idle states: left to the VM ($PEERS_IDLE)");
            return FastMode(None);
        }
        let held = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|()| f));
        match held {
            Ok(f) => {
                println!(
                    "CPU idle states: polling only for the run (/dev/cpu_dma_latency held at 0; \
                     $PEERS_IDLE=1 to let the VM halt idle CPUs)"
                );
                FastMode(Some(f))
            }
            Err(e) => {
                println!(
                    "CPU idle states: left to the VM (/dev/cpu_dma_latency: {e}; run as root \
                     to hold the fast mode): rounds may switch modes"
                );
                FastMode(None)
            }
        }
    }

    /// Whether the bound is held.
    pub fn is_held(&self) -> bool {
        self.0.is_some()
    }
}

/// The VM's timing mode, from the raw socket's round trips of every round
/// (ops/s, one round trip per op): this VM's loopback round trip flips
/// between ~7.5 µs (CPUs kept busy) and ~60 µs (CPUs idle).
pub fn mode_line(raw_samples: &[f64]) -> String {
    let rtt = 1e6 / median(raw_samples.to_vec());
    let fast = raw_samples.iter().filter(|&&x| 1e6 / x < 25.0).count();
    let share = fast as f64 / raw_samples.len() as f64;
    let mode = if share >= 2.0 / 3.0 {
        "fast mode (CPUs kept busy by other work, ~7.5 µs round trips)"
    } else if share <= 1.0 / 3.0 {
        "slow mode (CPUs idle, ~60 µs round trips)"
    } else {
        "mixed: the VM switched between its fast and slow modes during the run"
    };
    format!(
        "mode: the raw socket's median round trip is {rtt:.1} µs: {mode}; \
         {fast} of {} rounds had it under 25 µs",
        raw_samples.len()
    )
}

// ---------------------------------------------------------------------------
// redis-server, started on a free loopback port, dying with the bench.

/// A redis-server without persistence on a free loopback port, killed on
/// drop (and with the bench: it is started through
/// [`spawn_tied`]).
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn redis_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("MCDS_REDIS_BIN") {
        return Some(PathBuf::from(bin)).filter(|p| p.is_file());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file())
}

impl RedisServer {
    /// redis-server (from `PATH`, or `$MCDS_REDIS_BIN`) with no
    /// persistence on a free loopback port; `None` (with a message) if
    /// there is no redis-server. Panics if it does not start.
    pub fn start() -> Option<RedisServer> {
        let Some(binary) = redis_binary() else {
            println!(
                "redis-server not found (on PATH, or at $MCDS_REDIS_BIN if set): skipping every redis row \
                 (apt-get install redis-server; scripts/test.sh installs it)"
            );
            return None;
        };
        // A free port can be taken between the probe and the start: retry.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .unwrap()
                .port();
            let mut child = spawn_tied(&binary, |c| {
                c.args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--save", "", "--appendonly", "no"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
            })
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if child.try_wait().unwrap().is_some() {
                    break; // exited: most likely the port was taken
                }
                if ping(port) {
                    return Some(RedisServer { child, port });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server ({}) did not start", binary.display());
    }

    /// Its URL for redis-rs: `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut reply).is_ok() && reply == *b"+PONG\r\n"
}

// ---------------------------------------------------------------------------
// Arms and the interleaved rounds.

/// One measured thing: performs `ops` operations and returns the time they
/// took (for threads and tasks, from when all are ready until all are done).
pub type Run<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

/// An arm of a comparison: what it runs, how many operations a round, and
/// what the rounds measured.
pub struct Arm<'a> {
    /// Its name in the tables.
    pub id: String,
    /// Operations per round.
    pub ops: u64,
    /// The measured code.
    pub run: Run<'a>,
    /// Throughput of each round, ops/s.
    pub samples: Vec<f64>,
    /// Connections memcached accepted during this arm, over all rounds.
    pub new_connections: u64,
}

/// An arm named `id` doing `ops` operations a round with `run`.
pub fn arm<'a>(id: &str, ops: u64, run: Run<'a>) -> Arm<'a> {
    Arm {
        id: id.to_string(),
        ops,
        run,
        samples: Vec::new(),
        new_connections: 0,
    }
}

/// The floor every bench compares with: an arm named `id` sending one raw
/// meta-protocol increment of `key` per op, over a socket of its own to the
/// memcached at `addr`, and reading its reply.
pub fn raw_incr_arm(addr: &str, key: &str, id: &str, ops: u64) -> Arm<'static> {
    let mut raw = Raw::connect(addr);
    let key = vec![key.to_string()];
    ma_create(&mut raw, &key);
    let command = ma_incr(&key);
    arm(
        id,
        ops,
        Box::new(move |n| {
            let started = Instant::now();
            for _ in 0..n {
                std::hint::black_box(raw.exchange(&command, 1));
            }
            started.elapsed()
        }),
    )
}

/// A warm-up round (connections dialled, keys created, caches warm), then
/// `rounds` measured rounds: the groups in a rotating order, and the arms
/// of each group in a rotating order, back to back, so that every arm sees
/// the same mixture of the machine's moods. Each arm's samples get its
/// throughput of each round, and its `new_connections` what `memcached`
/// counted meanwhile.
pub fn run_rounds(arms: &mut [Vec<Arm<'_>>], rounds: usize, memcached: &MemcachedServer) {
    for group in arms.iter_mut() {
        for a in group.iter_mut() {
            (a.run)(a.ops);
        }
    }
    for round in 0..rounds {
        let groups = arms.len();
        for g in 0..groups {
            let group = &mut arms[(round + g) % groups];
            let len = group.len();
            for k in 0..len {
                let a = &mut group[(round + k) % len];
                let before = memcached.stat("total_connections");
                let took = (a.run)(a.ops);
                // The second `stats` call opens a connection of its own.
                a.new_connections += memcached.stat("total_connections") - before - 1;
                a.samples.push(a.ops as f64 / took.as_secs_f64());
            }
        }
    }
}
