//! Pipelines across servers whose every op's outcome is checked, against
//! real memcached (written by an adversarial review of outcomes filled in
//! place: a slice of the batch's outcomes for a part whose ops are
//! consecutive, a scratch list scattered back otherwise): batches
//! whose ops of two or three servers are interleaved, several payloads per
//! server (values make each server's share well above one payload, the
//! request budget), append_or_add
//! misses that need the second batch of adds, and a server that stops
//! answering mid-batch (its later payloads skipped). Every op's result is
//! checked, and every key's value afterwards.

use std::time::Duration;

use mcds_core::{Error, Key, Op, Reply, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// The kinds of op in a batch, by `i % KINDS`.
const KINDS: usize = 8;

/// The size of the big values: a quarter of a payload's request budget,
/// so that each server's 50 / servers big writes span several payloads.
fn big() -> usize {
    mcds_net::transport::request_budget() / 4
}

/// A value of `len` bytes that names op `i` (a misplaced value shows).
fn value(i: usize, tag: &str, len: usize) -> Vec<u8> {
    let head = format!("{tag}{i}:");
    let mut v = head.into_bytes();
    while v.len() < len {
        v.push(b'a' + (v.len() % 26) as u8);
    }
    v.truncate(len.max(1));
    v
}

/// The values a batch's ops use, by index (kept alive for the ops).
struct Plan {
    keys: Vec<Key>,
    big: Vec<Vec<u8>>,
    small: Vec<Vec<u8>>,
}

impl Plan {
    fn new(prefix: &str, n: usize, big: usize) -> Plan {
        Plan {
            keys: (0..n).map(|i| k(&format!("{prefix}:{i}"))).collect(),
            big: (0..n).map(|i| value(i, "big", big)).collect(),
            small: (0..n).map(|i| format!("+{i}").into_bytes()).collect(),
        }
    }

    /// The state before the batch.
    fn preset(&self, store: &MemcachedStore) {
        for (i, key) in self.keys.iter().enumerate() {
            let v: Option<Vec<u8>> = match i % KINDS {
                1 => Some(value(i, "get", 2000)),
                2 => Some((i * 1000).to_string().into_bytes()),
                4 => Some(format!("e{i}").into_bytes()),
                5 | 7 => Some(format!("x{i}").into_bytes()),
                _ => None,
            };
            match v {
                Some(v) => {
                    store.set(key, &v, Ttl::Never).unwrap();
                }
                None => {
                    store.delete(key).unwrap();
                }
            }
        }
    }

    fn ops(&self) -> Vec<Op<'_>> {
        self.keys
            .iter()
            .enumerate()
            .map(|(i, key)| match i % KINDS {
                0 => Op::Set {
                    key,
                    value: &self.big[i],
                    ttl: Ttl::Never,
                },
                1 => Op::Get(key),
                2 => Op::Incr {
                    key,
                    delta: i as u64 + 1,
                },
                3 => Op::AppendOrAdd {
                    key,
                    value: &self.small[i],
                    ttl: Ttl::Never,
                },
                4 => Op::AppendOrAdd {
                    key,
                    value: &self.small[i],
                    ttl: Ttl::Never,
                },
                5 => Op::Delete(key),
                6 => Op::Get(key),
                _ => Op::Add {
                    key,
                    value: &self.small[i],
                    ttl: Ttl::Never,
                },
            })
            .collect()
    }

    /// Whether `r` is op `i`'s own result (applied).
    fn applied(&self, i: usize, r: &mcds_core::Result<Reply>) -> bool {
        match i % KINDS {
            0 => matches!(r, Ok(Reply::Cas(_))),
            1 => matches!(r, Ok(Reply::Item(Some(it))) if it.value == value(i, "get", 2000)),
            2 => {
                let want = (i * 1000 + i + 1) as u64;
                matches!(r, Ok(Reply::Counter(Some(v))) if *v == want)
            }
            3 | 4 => matches!(r, Ok(Reply::Done)),
            5 => matches!(r, Ok(Reply::Applied(true))),
            6 => matches!(r, Ok(Reply::Item(None))),
            _ => matches!(r, Ok(Reply::Stored(Stored::NotStored))),
        }
    }

    /// Key `i`'s value after its op applied (`None`: missing).
    fn after(&self, i: usize) -> Option<Vec<u8>> {
        match i % KINDS {
            0 => Some(self.big[i].clone()),
            1 => Some(value(i, "get", 2000)),
            2 => Some((i * 1000 + i + 1).to_string().into_bytes()),
            3 => Some(self.small[i].clone()),
            4 => Some(format!("e{i}+{i}").into_bytes()),
            5 | 6 => None,
            _ => Some(format!("x{i}").into_bytes()),
        }
    }

    /// Key `i`'s value before the batch.
    fn before(&self, i: usize) -> Option<Vec<u8>> {
        match i % KINDS {
            1 => Some(value(i, "get", 2000)),
            2 => Some((i * 1000).to_string().into_bytes()),
            4 => Some(format!("e{i}").into_bytes()),
            5 | 7 => Some(format!("x{i}").into_bytes()),
            _ => None,
        }
    }
}

fn current(store: &MemcachedStore, key: &Key) -> Option<Vec<u8>> {
    store.get(key).unwrap().map(|it| it.value)
}

/// Which server of `servers` holds each of `keys` (each set through the
/// pool store first).
fn owners(pool: &MemcachedStore, servers: &[MemcachedServer], keys: &[Key]) -> Vec<usize> {
    let singles: Vec<MemcachedStore> = servers
        .iter()
        // Stores of one server each, to look: pools of their own.
        .map(|s| {
            MemcachedStore::builder()
                .pool_name("look")
                .connect([s.addr()])
                .unwrap()
        })
        .collect();
    keys.iter()
        .map(|key| {
            pool.set(key, b"probe", Ttl::Never).unwrap();
            let holders: Vec<usize> = singles
                .iter()
                .enumerate()
                .filter(|(_, s)| s.get(key).unwrap().is_some())
                .map(|(n, _)| n)
                .collect();
            assert_eq!(holders.len(), 1, "{key:?}: {holders:?}");
            pool.delete(key).unwrap();
            holders[0]
        })
        .collect()
}

fn interleaved(servers: usize) {
    let pool: Vec<MemcachedServer> = (0..servers)
        .map(|_| MemcachedServer::start(ServerOptions::default()))
        .collect();
    let store = MemcachedStore::builder()
        .connect(pool.iter().map(|s| s.addr()))
        .unwrap();
    for round in 0..3 {
        // 400 ops, 50 sets of a quarter payload: each server's share is well
        // above one payload, its ops interleaved with the others'.
        let plan = Plan::new(&format!("r11:{servers}:{round}"), 400, big());
        let owner = owners(&store, &pool, &plan.keys);
        for n in 0..servers {
            let mine: Vec<usize> = (0..owner.len()).filter(|&i| owner[i] == n).collect();
            assert!(mine.len() > 60, "server {n}: {} ops", mine.len());
            if servers > 1 {
                // Not consecutive: the scattered path.
                assert!(mine.windows(2).any(|w| w[1] != w[0] + 1));
            }
        }
        plan.preset(&store);
        let ops = plan.ops();
        let results = store.pipeline(&ops);
        assert_eq!(results.len(), ops.len());
        for (i, r) in results.iter().enumerate() {
            assert!(
                plan.applied(i, r),
                "{servers} servers, round {round}, op {i} ({}, server {}): {r:?}",
                ops[i].name(),
                owner[i]
            );
        }
        for (i, key) in plan.keys.iter().enumerate() {
            assert_eq!(
                current(&store, key),
                plan.after(i),
                "{servers} servers, round {round}, key {i}"
            );
        }
    }
}

#[test]
fn one_server_several_payloads_every_op_its_own_outcome() {
    interleaved(1);
}

#[test]
fn two_servers_interleaved_every_op_its_own_outcome() {
    interleaved(2);
}

#[test]
fn three_servers_interleaved_every_op_its_own_outcome() {
    interleaved(3);
}

/// One of three servers stops answering (SIGSTOP) after its connection is
/// open: its first payload times out, its later ones are skipped
/// (`skip_later`), and the other two servers' ops, interleaved with its
/// own over several rounds, must all get their own results. Its skipped
/// ops must not have been applied when it runs again.
#[test]
fn a_server_stopping_mid_batch_fails_only_its_own_ops() {
    let pool: Vec<MemcachedServer> = (0..3)
        .map(|_| MemcachedServer::start(ServerOptions::default()))
        .collect();
    let store = MemcachedStore::builder()
        .io_timeout(Duration::from_millis(500))
        .connect(pool.iter().map(|s| s.addr()))
        .unwrap();
    let plan = Plan::new("r11:stop", 400, big());
    let owner = owners(&store, &pool, &plan.keys);
    plan.preset(&store);
    // Every server's connection open and its incarnation known.
    let warm: Vec<Op<'_>> = plan.keys.iter().map(Op::Get).collect();
    assert!(store.pipeline(&warm).iter().all(|r| r.is_ok()));
    let stopped = 1;
    pool[stopped].pause();
    let ops = plan.ops();
    let results = store.pipeline(&ops);
    pool[stopped].resume();
    assert_eq!(results.len(), ops.len());
    let mut skipped = 0;
    for (i, r) in results.iter().enumerate() {
        let what = format!("op {i} ({}, server {}): {r:?}", ops[i].name(), owner[i]);
        if owner[i] == stopped {
            assert!(r.is_err(), "{what}");
            if let Err(Error::Io { source, .. }) = r
                && source.to_string().contains("not sent")
            {
                skipped += 1;
                // Never sent: not applied.
                assert_eq!(current(&store, &plan.keys[i]), plan.before(i), "{what}");
            }
        } else {
            assert!(plan.applied(i, r), "{what}");
            assert_eq!(current(&store, &plan.keys[i]), plan.after(i), "{what}");
        }
    }
    // The stopped server's share spans several payloads: some were skipped.
    assert!(skipped > 0, "{skipped}");
}

/// With one server a part is not always consecutive either: an op refused
/// before it is sent (a value above the client's item size limit) leaves a
/// hole in the server's ops, in every payload of a batch that spans
/// several. The ops around the holes get their own results, the refused
/// ops their error, and nothing is applied twice.
#[test]
fn one_server_ops_refused_before_sending_leave_holes_in_its_parts() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = MemcachedStore::builder()
        .item_size_limit(64 * 1024)
        .connect([server.addr()])
        .unwrap();
    let plan = Plan::new("r11:holes", 400, 48 * 1024);
    plan.preset(&store);
    let too_large = vec![b'z'; 100 * 1024];
    let mut ops = plan.ops();
    // Every 37th op (of every kind) refused by the client.
    let refused = |i: usize| i % 37 == 5;
    for (i, op) in ops.iter_mut().enumerate() {
        if refused(i) {
            *op = Op::Set {
                key: &plan.keys[i],
                value: &too_large,
                ttl: Ttl::Never,
            };
        }
    }
    let results = store.pipeline(&ops);
    assert_eq!(results.len(), ops.len());
    for (i, r) in results.iter().enumerate() {
        let what = format!("op {i} ({}): {r:?}", ops[i].name());
        if refused(i) {
            assert!(matches!(r, Err(Error::ValueTooLarge { .. })), "{what}");
            assert_eq!(current(&store, &plan.keys[i]), plan.before(i), "{what}");
        } else {
            assert!(plan.applied(i, r), "{what}");
            assert_eq!(current(&store, &plan.keys[i]), plan.after(i), "{what}");
        }
    }
}
