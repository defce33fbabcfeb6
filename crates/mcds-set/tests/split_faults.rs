//! The growing `Set` under faults on real memcached, as an adversarial
//! review attacked it: a server restarting while a bucket splits, a
//! splitter that died before its delete, `clear` racing splits, and a
//! directory lost and made again while a handle has the old one cached.
//! Every acknowledged add is visible to a fresh reader, or the read says
//! the bucket is `Lost`; never a silent rollback. `ROUNDS=N` runs more.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcds_core::{Error, Key, Op, Reply, Result, Store, stable_hash};
use mcds_memcached::MemcachedStore;
use mcds_set::Set;
use mcds_testkit::{MemcachedServer, ServerPool};

type Hook = Box<dyn FnMut(&Key) -> bool + Send>;

/// A real store with a hook run just before the first op of a kind (here a
/// delete-by-CAS): a splitter paused between its steps 4 and 5.
struct Stall {
    inner: Arc<dyn Store>,
    hook: Mutex<Option<Hook>>,
    on_plain_delete: bool,
}
impl std::fmt::Debug for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stall")
    }
}
impl Stall {
    fn fire(&self, ops: &[Op<'_>]) {
        let key = ops.iter().find_map(|o| match o {
            Op::DeleteCas { key, .. } if !self.on_plain_delete => Some((*key).clone()),
            Op::Delete(key) if self.on_plain_delete => Some((*key).clone()),
            _ => None,
        });
        if let Some(key) = key {
            let hook = self.hook.lock().unwrap().take();
            if let Some(mut h) = hook {
                if !h(&key) {
                    *self.hook.lock().unwrap() = Some(h);
                }
            }
        }
    }
}
impl Store for Stall {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        self.fire(std::slice::from_ref(op));
        self.inner.execute(op)
    }
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        self.fire(ops);
        self.inner.pipeline(ops)
    }
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        self.inner.supports_cas(key)
    }
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        self.inner.colocated(a, b)
    }
    fn item_size_limit(&self) -> usize {
        self.inner.item_size_limit()
    }
    fn retention(&self, key: &Key) -> Result<mcds_core::Retention> {
        self.inner.retention(key)
    }
}

fn raw_has(s: &MemcachedServer, key: &Key) -> bool {
    let k = String::from_utf8(key.as_bytes().to_vec()).unwrap();
    s.raw(format!("get {k}\r\n").as_bytes(), |l| {
        l == "END" || l.starts_with("ERROR") || l.starts_with("CLIENT_ERROR")
    })
    .iter()
    .any(|l| l.starts_with("VALUE"))
}

fn holder(pool: &ServerPool, key: &Key) -> Option<usize> {
    pool.servers.iter().position(|s| raw_has(s, key))
}

/// S1: a split in progress when the split bucket's server restarts. An add
/// acknowledged into the bucket after the splitter read it is then silently
/// missing: the splitter's delete finds the bucket gone, "completes" the
/// split from its stale copy, and reads answer Ok without the member
/// (instead of Error::Lost).
#[test]
fn a_restart_during_a_split_is_lost_never_a_silent_rollback() {
    let rounds: u32 = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let mut pool = ServerPool::start(3, Default::default());
    let servers = pool.servers_arg();
    let mut silent = 0;
    let mut lost_err = 0;
    let mut skipped = 0;
    for round in 0..rounds {
        let name = format!("s1-{round}");
        let stall = Arc::new(Stall {
            inner: Arc::new(MemcachedStore::connect(&servers).unwrap()),
            hook: Mutex::new(None),
            on_plain_delete: false,
        });
        let splitter = Set::new(stall.clone() as Arc<dyn Store>, &name)
            .unwrap()
            .with_bucket_bytes(128);
        let writer_store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&servers).unwrap());
        // The writer never splits (big buckets): only the splitter does.
        let writer = Set::new(writer_store.clone(), &name)
            .unwrap()
            .with_bucket_bytes(1 << 20);
        let mut model: BTreeSet<Vec<u8>> = BTreeSet::new();
        // Grow past the root with the splitter (no hook yet).
        let mut i = 0;
        while i < 8 {
            let m = format!("m{round}-{i:04}");
            splitter.add(&[&m]).unwrap();
            model.insert(m.into_bytes());
            i += 1;
        }
        let dir = splitter.key().clone();
        let dir_server = holder(&pool, &dir).unwrap();
        // Arm: on the splitter's next delete-by-CAS of a bucket (step 5),
        // the writer adds a member routed to that bucket, then that
        // bucket's server restarts (if it holds neither the directory).
        let outcome: Arc<Mutex<Option<(String, usize)>>> = Arc::default();
        let out2 = outcome.clone();
        let probes: Vec<String> = pool.servers.iter().map(|s| s.addr()).collect();
        let (tx, rx) = std::sync::mpsc::channel::<usize>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let writer2 = writer.clone();
        let dir2 = dir.clone();
        let mut tx = Some(tx);
        let mut done_rx = Some(done_rx);
        *stall.hook.lock().unwrap() = Some(Box::new(move |key: &Key| {
            // The bucket's depth and index from its key `<dir>.<id>.<d>.<i>[.<n>]`.
            let rest = String::from_utf8_lossy(&key.as_bytes()[dir2.len()..]).into_owned();
            let f: Vec<&str> = rest.trim_start_matches('.').split('.').collect();
            let d: u32 = f[1].parse().unwrap();
            let idx = u64::from_str_radix(f[2], 16).unwrap();
            if key.as_bytes() == dir2.as_bytes() || d == 0 {
                return false;
            }
            let mut v = 0u64;
            let victim = loop {
                let m = format!("victim-{v}");
                let h = stable_hash(m.as_bytes());
                let at = if d == 0 { 0 } else { h >> (64 - d) };
                if at == idx {
                    break m;
                }
                v += 1;
            };
            let r = writer2.add(&[&victim]);
            let k = String::from_utf8(key.as_bytes().to_vec()).unwrap();
            let srv = probes.iter().position(|a| {
                use std::io::{BufRead, BufReader, Write};
                let mut c = std::net::TcpStream::connect(a).unwrap();
                c.write_all(format!("get {k}\r\n").as_bytes()).unwrap();
                let mut r = BufReader::new(c);
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                line.starts_with("VALUE")
            });
            println!(
                "  [hook] bucket {rest} (depth {d}) on server {srv:?}; writer.add({victim}) = {r:?}"
            );
            if r.is_ok() {
                if let Some(s) = srv {
                    *out2.lock().unwrap() = Some((victim, s));
                    tx.take().unwrap().send(s).unwrap();
                    done_rx.take().unwrap().recv().unwrap(); // wait for the restart
                }
            }
            true
        }));
        // Drive the splitter until its hook fires, restart in between.
        let mut fired = None;
        let h = {
            let splitter = splitter.clone();
            std::thread::spawn(move || {
                let mut added = Vec::new();
                for j in 0..400 {
                    let m = format!("n{round}-{j:04}");
                    match splitter.add(&[&m]) {
                        Ok(()) => added.push(m),
                        Err(e) => {
                            println!("  splitter add error {e}");
                            break;
                        }
                    }
                    if stall.hook.lock().unwrap().is_none() {
                        break; // fired: stop writing
                    }
                }
                added
            })
        };
        if let Ok(s) = rx.recv_timeout(Duration::from_secs(30)) {
            if s == dir_server {
                println!(
                    "round {round}: bucket on the directory's server: restart anyway (set should then read empty-whole)"
                );
            }
            pool.servers[s].restart();
            fired = Some(s);
            done_tx.send(()).unwrap();
        }
        let added = h.join().unwrap();
        for m in added {
            model.insert(m.into_bytes());
        }
        let Some(restarted) = fired else {
            skipped += 1;
            println!("round {round}: hook did not fire usefully");
            continue;
        };
        let (victim, _) = outcome.lock().unwrap().clone().unwrap();
        let reader = Set::new(
            Arc::new(MemcachedStore::connect(&servers).unwrap()) as Arc<dyn Store>,
            &name,
        )
        .unwrap();
        let got = reader.members();
        let has = reader.contains(&victim);
        match (&got, &has) {
            (Ok(ms), Ok(c)) => {
                let set: BTreeSet<Vec<u8>> = ms.iter().cloned().collect();
                let contains_victim = set.contains(victim.as_bytes());
                if ms.is_empty() {
                    println!(
                        "round {round}: restarted {restarted}: set reads empty (whole) — allowed"
                    );
                } else if !contains_victim || !*c {
                    silent += 1;
                    let missing_model = model.iter().filter(|m| !set.contains(*m)).count();
                    println!(
                        "round {round}: SILENT LOSS: restarted server {restarted} (dir on {dir_server}); members() Ok with {} members, acknowledged {victim} missing (contains={c}); {missing_model} of the model's {} missing too",
                        ms.len(),
                        model.len()
                    );
                } else {
                    println!("round {round}: victim present");
                }
            }
            _ => {
                if matches!(got, Err(Error::Lost { .. })) || matches!(has, Err(Error::Lost { .. }))
                {
                    lost_err += 1;
                }
                println!(
                    "round {round}: members={:?} contains={has:?}",
                    got.as_ref().map(|m| m.len())
                );
            }
        }
    }
    println!(
        "S1: {silent} silent losses, {lost_err} Lost errors, {skipped} skipped, of {rounds} rounds"
    );
    assert_eq!(
        silent, 0,
        "acknowledged adds silently missing after a restart during a split"
    );
}

/// S3: clear() reads the directory, then deletes the buckets it names and
/// the directory. A split that completes in between leaves its children
/// undeleted; a handle that routed by that split keeps appending to them
/// after clear() returned: its adds are acknowledged, and lost (a fresh
/// reader sees an empty set), while that handle itself still reads them.
#[test]
fn a_clear_racing_splits_leaves_no_bucket_a_handle_keeps_writing_to() {
    let server = MemcachedServer::start_default();
    let mk = || Arc::new(MemcachedStore::connect(&server.addr()).unwrap()) as Arc<dyn Store>;
    let stall = Arc::new(Stall {
        inner: mk(),
        hook: Mutex::new(None),
        on_plain_delete: true,
    });
    let h = Set::new(mk(), "s3").unwrap().with_bucket_bytes(128);
    let c = Set::new(stall.clone() as Arc<dyn Store>, "s3").unwrap();
    for i in 0..8 {
        h.add(&[format!("a{i}")]).unwrap();
    }
    let h2 = h.clone();
    *stall.hook.lock().unwrap() = Some(Box::new(move |_k: &Key| {
        for i in 0..80 {
            h2.add(&[format!("b{i}")]).unwrap();
        }
        println!("  [hook] clear() read the directory; H added 80 more members (splits)");
        true
    }));
    c.clear().unwrap();
    let fresh = Set::new(mk(), "s3").unwrap();
    println!(
        "after clear(): fresh reader sees {:?} members",
        fresh.members().map(|m| m.len())
    );
    let mut lost = Vec::new();
    for i in 0..20 {
        let m = format!("after-{i}");
        h.add(&[&m]).unwrap();
        let seen = Set::new(mk(), "s3").unwrap().contains(&m).unwrap();
        let own = h.contains(&m).unwrap();
        if !seen {
            lost.push((m, own));
        }
    }
    let fresh = Set::new(mk(), "s3").unwrap();
    println!(
        "20 adds after clear() returned, all Ok; fresh reader: {:?} members; lost (member, H.contains): {lost:?}",
        fresh.members().map(|m| m.len())
    );
    println!("H.len() = {:?}, fresh.len() = {:?}", h.len(), fresh.len());
    assert!(
        lost.is_empty(),
        "{} of 20 acknowledged adds after clear() are invisible to other clients",
        lost.len()
    );
}

/// S3b: the same race without a hook: a writer grows the set while
/// another client clears it; after both return, the writer adds one
/// member (Ok) and a fresh reader must see it.
#[test]
fn a_clear_racing_a_growing_set_loses_no_add_made_after_it() {
    let rounds: u64 = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let mk = |a: &str| Arc::new(MemcachedStore::connect(a).unwrap()) as Arc<dyn Store>;
    let mut lost = 0;
    for round in 0..rounds {
        let name = format!("s3b-{round}");
        let h = Set::new(mk(&addr), &name).unwrap().with_bucket_bytes(64);
        let c = Set::new(mk(&addr), &name).unwrap();
        for i in 0..6 {
            h.add(&[format!("a{i}")]).unwrap();
        }
        let h2 = h.clone();
        let t = std::thread::spawn(move || {
            for i in 0..40 {
                if h2.add(&[format!("b{i}")]).is_err() {
                    return false;
                }
            }
            true
        });
        std::thread::sleep(Duration::from_micros((round * 131) % 3000));
        c.clear().unwrap();
        let ok = t.join().unwrap();
        let mut bad = 0;
        for i in 0..10 {
            let m = format!("after-{i}");
            if h.add(&[&m]).is_ok() && !Set::new(mk(&addr), &name).unwrap().contains(&m).unwrap() {
                bad += 1;
            }
        }
        if bad > 0 {
            lost += 1;
            println!(
                "round {round}: {bad} of 10 adds made after clear() returned were acknowledged but are invisible to a fresh reader (writer ok={ok})"
            );
        }
    }
    println!("S3b: {lost} of {rounds} rounds lost acknowledged adds");
    assert_eq!(lost, 0);
}

fn in_bucket(m: &str, d: u32, idx: u64) -> bool {
    let h = stable_hash(m.as_bytes());
    (if d == 0 { 0 } else { h >> (64 - d) }) == idx
}

/// S4: a splitter killed between steps 3 and 5 (documented: its bucket can
/// no longer split). Later, members are added to and removed from that
/// bucket (acknowledged), then the bucket's server restarts. Instead of
/// Error::Lost, a reader "completes" the dead split from its stale
/// children: the set answers Ok with the bucket as it was when the dead
/// splitter read it — later adds gone, later removals undone.
#[test]
fn a_dead_splitters_children_never_stand_in_for_a_bucket_lost_later() {
    let rounds: u32 = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut pool = ServerPool::start(3, Default::default());
    let servers = pool.servers_arg();
    let (mut wrong, mut lost_err, mut other) = (0, 0, 0);
    for round in 0..rounds {
        let name = format!("s4-{round}");
        let stall = Arc::new(Stall {
            inner: Arc::new(MemcachedStore::connect(&servers).unwrap()),
            hook: Mutex::new(None),
            on_plain_delete: false,
        });
        let splitter = Set::new(stall.clone() as Arc<dyn Store>, &name)
            .unwrap()
            .with_bucket_bytes(128);
        let writer = Set::new(
            Arc::new(MemcachedStore::connect(&servers).unwrap()) as Arc<dyn Store>,
            &name,
        )
        .unwrap()
        .with_bucket_bytes(1 << 20);
        let mut model: BTreeSet<String> = BTreeSet::new();
        let victim_bucket: Arc<Mutex<Option<(Key, u32, u64)>>> = Arc::default();
        let vb = victim_bucket.clone();
        let dir = splitter.key().clone();
        let dir2 = dir.clone();
        *stall.hook.lock().unwrap() = Some(Box::new(move |key: &Key| {
            let rest = String::from_utf8_lossy(&key.as_bytes()[dir2.len()..]).into_owned();
            let f: Vec<&str> = rest.trim_start_matches('.').split('.').collect();
            let d: u32 = f[1].parse().unwrap();
            let idx = u64::from_str_radix(f[2], 16).unwrap();
            if d == 0 {
                return false;
            }
            *vb.lock().unwrap() = Some((key.clone(), d, idx));
            panic!("splitter killed between its steps 4 and 5");
        }));
        // The splitter adds until its hook fires; it then "dies" (this thread
        // stops before its delete: a panic unwinds it with no cleanup).
        let sp = splitter.clone();
        let h = std::thread::spawn(move || {
            let mut done = Vec::new();
            for j in 0..400 {
                let m = format!("e{round}-{j:04}");
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sp.add(&[&m])));
                match r {
                    Ok(Ok(())) => done.push(m),
                    Ok(Err(e)) => {
                        println!("  splitter error {e}");
                        break;
                    }
                    Err(_) => {
                        done.push(m); // its append landed before the split began
                        break;
                    }
                }
            }
            done
        });
        model.extend(h.join().unwrap());
        let Some((bkey, d, idx)) = victim_bucket.lock().unwrap().clone() else {
            other += 1;
            println!("round {round}: no depth>=1 split");
            continue;
        };
        // Later traffic on that bucket, by the writer.
        let early: Vec<String> = model
            .iter()
            .filter(|m| in_bucket(m, d, idx))
            .cloned()
            .collect();
        let mut late = Vec::new();
        let mut v = 0;
        while late.len() < 3 {
            let m = format!("late{round}-{v}");
            if in_bucket(&m, d, idx) {
                late.push(m);
            }
            v += 1;
        }
        writer.add(&late).unwrap();
        writer.remove(&early[..1]).unwrap();
        model.extend(late.iter().cloned());
        model.remove(&early[0]);
        let bsrv = holder(&pool, &bkey).unwrap();
        pool.servers[bsrv].restart();
        let reader = Set::new(
            Arc::new(MemcachedStore::connect(&servers).unwrap()) as Arc<dyn Store>,
            &name,
        )
        .unwrap();
        match reader.members() {
            Ok(ms) => {
                let got: BTreeSet<String> = ms
                    .into_iter()
                    .map(|m| String::from_utf8(m).unwrap())
                    .collect();
                if got.is_empty() {
                    println!("round {round}: empty (directory lost too)");
                } else if got != model {
                    wrong += 1;
                    println!(
                        "round {round}: WRONG (Ok): removed {} present={}, late adds present {:?}; missing {:?} extra {:?}",
                        early[0],
                        got.contains(&early[0]),
                        late.iter().map(|m| got.contains(m)).collect::<Vec<_>>(),
                        model.difference(&got).collect::<Vec<_>>(),
                        got.difference(&model).collect::<Vec<_>>()
                    );
                } else {
                    println!("round {round}: equal to model");
                }
            }
            Err(Error::Lost { .. }) => lost_err += 1,
            Err(e) => println!("round {round}: {e}"),
        }
    }
    println!("S4: {wrong} wrong Ok answers, {lost_err} Lost, {other} skipped, of {rounds}");
    assert_eq!(wrong, 0);
}

/// S6: the directory's server restarts (the set "starts again"). A handle
/// that cached the shape keeps appending, without error, to the old life's
/// buckets on the other servers — after the restart, and even after
/// another client started the new life: its adds are acknowledged and
/// never visible to anyone else.
#[test]
fn a_handle_notices_that_its_sets_directory_was_lost_and_made_again() {
    let mut pool = ServerPool::start(3, Default::default());
    let servers = pool.servers_arg();
    let mk = || Arc::new(MemcachedStore::connect(&servers).unwrap()) as Arc<dyn Store>;
    let h = Set::new(mk(), "s6").unwrap().with_bucket_bytes(64);
    for i in 0..200 {
        h.add(&[format!("a{i}")]).unwrap();
    }
    let dir_srv = holder(&pool, h.key()).unwrap();
    pool.servers[dir_srv].restart();
    println!("restarted the directory's server {dir_srv}");
    let fresh = Set::new(mk(), "s6").unwrap();
    println!(
        "fresh reader after restart: {:?} members",
        fresh.members().map(|m| m.len())
    );
    let other = Set::new(mk(), "s6").unwrap();
    other.add(&["z"]).unwrap(); // the new life
    let mut acked_invisible = 0;
    let mut acked = 0;
    for i in 0..50 {
        let m = format!("after{i}");
        if h.add(&[&m]).is_ok() {
            acked += 1;
            if !Set::new(mk(), "s6").unwrap().contains(&m).unwrap() {
                acked_invisible += 1;
            }
        }
    }
    let all = Set::new(mk(), "s6").unwrap().members().unwrap();
    println!(
        "after the restart and a new life: H acked {acked} adds, {acked_invisible} invisible to a fresh reader; fresh members() = {} members; H.contains(after0) = {:?}",
        all.len(),
        h.contains("after0")
    );
    assert_eq!(acked_invisible, 0);
}
