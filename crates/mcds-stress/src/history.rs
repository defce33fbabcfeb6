//! A history-checked lock workload, in the spirit of Jepsen: worker processes
//! acquire, extend and release one fenced lock while the lock's server is
//! restarted, frozen past the TTL and flooded into eviction; each writes a
//! timestamped history, and [`check`] verifies it.
//!
//! The protected resource is a key on *another* server (never faulted) that
//! keeps the highest fencing token it has seen and a write counter; a write
//! carrying a lower token is rejected. That is what a fenced resource does
//! (Kleppmann, "How to do distributed locking"): a lock on memcached can be
//! lost (a restart, an eviction), so two processes may both believe they
//! hold it, but the resource accepts only the newer one.
//!
//! History lines, tab-separated, times in microseconds since the epoch:
//!
//! ```text
//! acq  ID T0 T1 TOKEN            acquire started at T0, granted at T1
//! write ID TOKEN SEQ T           accepted as the resource's write number SEQ
//! reject ID TOKEN T              refused: the resource had seen a newer token
//! ext  ID TOKEN T0 T1 OUTCOME    Extended | Lost | error
//! rel  ID TOKEN T0 T1 OUTCOME    Released | Lost | error
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcds_core::{Error, Key, Result, Store, Ttl, Updated};
use mcds_lock::{Extend, Lock, Release};

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The lease of the workload's lock.
pub const TTL: Duration = Duration::from_secs(1);

/// How long a holder pauses past its lease (with `pauses`): the lease,
/// the 2 s memcached's seconds counter may lag, and more, so that another
/// holder can be granted the lock meanwhile.
pub const HOLDER_PAUSE: Duration = Duration::from_millis(TTL.as_millis() as u64 * 2 + 2_500);

/// Run one worker for `secs` seconds: lock `name` on `lock_store`, fenced
/// writes to `resource`. With `pauses`, one acquisition in 8 stops for
/// [`HOLDER_PAUSE`] in its critical section before it writes again (a
/// holder paused past its lease: its late writes must be refused).
/// Returns the history, one event per line.
pub fn run(
    lock_store: Arc<dyn Store>,
    resource: Arc<dyn Store>,
    name: &str,
    id: u64,
    secs: u64,
    pauses: bool,
) -> Result<String> {
    let lock = Lock::new(lock_store, name, TTL)?.with_fencing(true);
    let key = Key::new(format!("fenced:{name}"))?;
    let end = Instant::now() + Duration::from_secs(secs);
    let mut out = String::new();
    let mut acquisitions = 0u64;
    while Instant::now() < end {
        let t0 = now_us();
        let guard = match lock.acquire(Duration::from_millis(500)) {
            Ok(guard) => guard,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let t1 = now_us();
        let Some(token) = guard.fencing_token() else {
            return Err(Error::InvalidArgument("no fencing token".into()));
        };
        out.push_str(&format!("acq\t{id}\t{t0}\t{t1}\t{token}\n"));
        acquisitions += 1;
        // A critical section of about 200 ms: faults land inside it.
        for step in 0..8 {
            if pauses && step == 1 && (acquisitions + id) % 8 == 0 {
                std::thread::sleep(HOLDER_PAUSE);
            }
            match fenced_write(resource.as_ref(), &key, token) {
                Ok(Some(seq)) => {
                    out.push_str(&format!("write\t{id}\t{token}\t{seq}\t{}\n", now_us()))
                }
                Ok(None) => out.push_str(&format!("reject\t{id}\t{token}\t{}\n", now_us())),
                Err(_) => {}
            }
            std::thread::sleep(Duration::from_millis(25));
            if step % 3 == 2 {
                let t0 = now_us();
                let outcome = match guard.extend(TTL) {
                    Ok(Extend::Extended) => "Extended",
                    Ok(Extend::Lost) => "Lost",
                    Err(_) => "error",
                };
                out.push_str(&format!(
                    "ext\t{id}\t{token}\t{t0}\t{}\t{outcome}\n",
                    now_us()
                ));
            }
        }
        let t0 = now_us();
        let outcome = match guard.release() {
            Ok(Release::Released) => "Released",
            Ok(Release::Lost) => "Lost",
            Err(_) => "error",
        };
        out.push_str(&format!(
            "rel\t{id}\t{token}\t{t0}\t{}\t{outcome}\n",
            now_us()
        ));
    }
    Ok(out)
}

/// A write to the fenced resource: accepted (its sequence number) unless
/// the resource has seen a newer token.
fn fenced_write(resource: &dyn Store, key: &Key, token: u64) -> Result<Option<u64>> {
    // The resource's value: "<highest token> <write count>".
    let parse = |v: &[u8]| -> Option<(u64, u64)> {
        let (t, s) = std::str::from_utf8(v).ok()?.split_once(' ')?;
        Some((t.parse().ok()?, s.parse().ok()?))
    };
    let updated = resource.update(key, Ttl::Never, 100, &mut |current| {
        let (seen, seq) = current.and_then(parse).unwrap_or((0, 0));
        (token >= seen).then(|| format!("{token} {}", seq + 1).into_bytes())
    })?;
    Ok(match updated {
        Updated::Stored { value, .. } => parse(&value).map(|(_, seq)| seq),
        Updated::Unchanged => None,
    })
}

/// One acquisition, as the histories tell it.
#[derive(Clone, Debug, Default)]
struct Acquisition {
    worker: u64,
    token: u64,
    acquire: (u64, u64),
    release: Option<(u64, u64, String)>,
}

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Acquisitions granted.
    pub acquisitions: usize,
    /// Writes the resource accepted.
    pub accepted: usize,
    /// Writes the resource refused (a stale token).
    pub rejected: usize,
    /// Releases that answered `Lost` (the lease had ended).
    pub lost_releases: usize,
    /// Extends that answered `Lost`.
    pub lost_extends: usize,
    /// Extends and releases that failed with an error (server down, frozen).
    pub errors: usize,
    /// Two acquisitions' accepted writes interleaved at the resource.
    pub overlaps: Vec<String>,
    /// A later acquisition got a token not above an earlier one's.
    pub token_order: Vec<String>,
    /// A release answered `Released` although someone else was granted the
    /// lock while this guard held it.
    pub false_releases: Vec<String>,
}

impl Verdict {
    /// No violation of any kind.
    pub fn ok(&self) -> bool {
        self.overlaps.is_empty() && self.token_order.is_empty() && self.false_releases.is_empty()
    }

    /// The counts, for a test's output line.
    pub fn summary(&self) -> String {
        format!(
            "{} acquisitions, {} fenced writes accepted, {} rejected (stale token), {} extends and {} releases reported Lost, {} failed with an error; overlaps {}, token order violations {}, false releases {}",
            self.acquisitions,
            self.accepted,
            self.rejected,
            self.lost_extends,
            self.lost_releases,
            self.errors,
            self.overlaps.len(),
            self.token_order.len(),
            self.false_releases.len()
        )
    }

    /// Fail the test unless the history had enough acquisitions to mean
    /// anything and no violation.
    pub fn assert_sound(&self) {
        assert!(
            self.acquisitions > 20,
            "too few acquisitions to mean anything"
        );
        assert!(self.ok(), "{self:#?}");
    }
}

/// Check the histories of all workers (their lines, concatenated).
///
/// * **No overlap:** ordered by the resource's write numbers, the accepted
///   writes' tokens never go back: once a newer acquisition has written, an
///   older one never writes again.
/// * **Tokens increase:** if acquisition X was granted before Y's acquire
///   began, X's token is below Y's.
/// * **Honest releases:** if Y's acquire began after X was granted and Y was
///   granted before X's release began, X's lease had ended, so X's release
///   must not answer `Released`.
pub fn check(history: &str) -> Verdict {
    let mut v = Verdict::default();
    let mut acquisitions: BTreeMap<(u64, u64), Acquisition> = BTreeMap::new();
    let mut writes: Vec<(u64, u64, u64)> = Vec::new(); // (seq, token, worker)
    for line in history.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        match f.first().copied() {
            Some("acq") => {
                acquisitions.insert(
                    (n(1), n(4)),
                    Acquisition {
                        worker: n(1),
                        token: n(4),
                        acquire: (n(2), n(3)),
                        release: None,
                    },
                );
            }
            Some("write") => writes.push((n(3), n(2), n(1))),
            Some("reject") => v.rejected += 1,
            Some("ext") => match f.get(5).copied() {
                Some("Lost") => v.lost_extends += 1,
                Some("error") => v.errors += 1,
                _ => {}
            },
            Some("rel") => {
                let outcome = f.get(5).copied().unwrap_or("").to_string();
                match outcome.as_str() {
                    "Lost" => v.lost_releases += 1,
                    "error" => v.errors += 1,
                    _ => {}
                }
                if let Some(a) = acquisitions.get_mut(&(n(1), n(2))) {
                    a.release = Some((n(3), n(4), outcome));
                }
            }
            _ => {}
        }
    }
    v.acquisitions = acquisitions.len();
    v.accepted = writes.len();
    writes.sort();
    let mut highest = (0u64, 0u64);
    for &(seq, token, worker) in &writes {
        if token < highest.0 {
            v.overlaps.push(format!(
                "write #{seq} by worker {worker} with token {token} after token {} had written",
                highest.0
            ));
        }
        highest = highest.max((token, seq));
    }
    let list: Vec<&Acquisition> = acquisitions.values().collect();
    for x in &list {
        for y in &list {
            if x.acquire.1 < y.acquire.0 && x.token >= y.token {
                v.token_order.push(format!(
                    "worker {} token {} granted at {} before worker {} began acquiring at {} and got token {}",
                    x.worker, x.token, x.acquire.1, y.worker, y.acquire.0, y.token
                ));
            }
        }
        if let Some((rel_start, _, outcome)) = &x.release
            && outcome == "Released"
        {
            for y in &list {
                if y.acquire.0 > x.acquire.1 && y.acquire.1 < *rel_start {
                    v.false_releases.push(format!(
                        "worker {} (token {}) released as its own a lock that worker {} (token {}) was granted at {}",
                        x.worker, x.token, y.worker, y.token, y.acquire.1
                    ));
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_history_passes() {
        let h = "acq\t1\t10\t20\t100\nwrite\t1\t100\t1\t25\nrel\t1\t100\t30\t31\tReleased\n\
                 acq\t2\t32\t40\t101\nwrite\t2\t101\t2\t45\nrel\t2\t101\t50\t51\tReleased\n";
        let v = check(h);
        assert!(v.ok(), "{v:?}");
        assert_eq!((v.acquisitions, v.accepted), (2, 2));
    }

    #[test]
    fn each_violation_is_found() {
        // Token 100 writes again after 101 did: overlap.
        let overlap = "write\t1\t101\t1\t10\nwrite\t2\t100\t2\t11\n";
        assert_eq!(check(overlap).overlaps.len(), 1);
        // Granted in order, tokens backwards.
        let order = "acq\t1\t10\t20\t100\nacq\t2\t30\t40\t99\n";
        assert_eq!(check(order).token_order.len(), 1);
        // 2 was granted while 1 held it, and 1 still says Released.
        let lie = "acq\t1\t10\t20\t100\nacq\t2\t30\t40\t101\nrel\t1\t100\t50\t51\tReleased\n";
        assert_eq!(check(lie).false_releases.len(), 1);
        // The same with Lost is honest.
        let honest = lie.replace("Released", "Lost");
        assert!(check(&honest).ok());
    }
}
