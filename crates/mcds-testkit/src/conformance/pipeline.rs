//! Pipelined batches: the same replies as one op at a time, in order, with
//! errors per op, in as many payloads as it takes.

use mcds_core::{CasOutcome, Key, Op, OpArgs, OpKind, Reply, Stored, Ttl, traffic};

use super::{Env, assert_non_numeric, assert_too_large, k, value};

/// A reply with CAS ids blanked, for comparing two runs.
fn shape(r: &mcds_core::Result<Reply>) -> String {
    match r {
        Ok(Reply::Item(Some(i))) => format!("item {:?}", String::from_utf8_lossy(&i.value)),
        Ok(Reply::Cas(_)) => "cas".into(),
        Ok(Reply::Stored(Stored::Stored(_))) => "stored".into(),
        Ok(Reply::CasOutcome(CasOutcome::Stored(_))) => "cas stored".into(),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("error {e:?}").split_whitespace().take(2).collect(),
    }
}

/// The arguments of a generated op in [`pipeline_every_op`]: its own key,
/// the value "1", an hour, and 1 for every number.
struct Fixed<'a>(&'a Key);

impl<'a> OpArgs<'a> for Fixed<'a> {
    fn key(&mut self, _field: &'static str) -> &'a Key {
        self.0
    }
    fn bytes(&mut self, _field: &'static str) -> &'a [u8] {
        b"1"
    }
    fn ttl(&mut self, _field: &'static str) -> Ttl {
        Ttl::secs(3600)
    }
    fn number(&mut self, _field: &'static str) -> u64 {
        1
    }
}

/// Every op kind in one batch, hits and misses, several on the same keys:
/// the same replies as running the ops one by one (CAS ids aside).
pub fn pipeline_every_op(env: &Env) {
    let s = env.s();
    let run = |prefix: &str, piped: bool| -> Vec<String> {
        let key = |n: &str| k(&format!("{prefix}{n}"));
        let names = [
            "hit", "miss", "new", "new2", "hit2", "num", "aoa", "ioi", "del",
        ];
        let [hit, miss, new, new2, hit2, num, aoa, ioi, del] = names.map(key);
        s.set(&hit, b"v", Ttl::Never).unwrap();
        s.set(&hit2, b"w", Ttl::Never).unwrap();
        s.set(&num, b"10", Ttl::Never).unwrap();
        s.set(&del, b"x", Ttl::Never).unwrap();
        let ops = [
            Op::Get(&hit),
            Op::Get(&miss),
            Op::Set {
                key: &new,
                value: b"s",
                ttl: Ttl::secs(100),
            },
            Op::Add {
                key: &hit,
                value: b"no",
                ttl: Ttl::Never,
            },
            Op::Add {
                key: &new2,
                value: b"a",
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &miss,
                value: b"no",
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &hit2,
                value: b"r",
                ttl: Ttl::Never,
            },
            Op::Append {
                key: &hit,
                value: b">",
            },
            Op::Append {
                key: &miss,
                value: b">",
            },
            Op::Prepend {
                key: &hit,
                value: b"<",
            },
            Op::Prepend {
                key: &miss,
                value: b"<",
            },
            Op::AppendOrAdd {
                key: &aoa,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::AppendOrAdd {
                key: &aoa,
                value: b"2",
                ttl: Ttl::Never,
            },
            Op::Incr {
                key: &num,
                delta: 5,
            },
            Op::Incr {
                key: &miss,
                delta: 5,
            },
            Op::Decr {
                key: &num,
                delta: 100,
            },
            Op::Decr {
                key: &miss,
                delta: 1,
            },
            Op::IncrOrInit {
                key: &ioi,
                delta: 1,
                initial: 7,
                ttl: Ttl::Never,
            },
            Op::IncrOrInit {
                key: &ioi,
                delta: 1,
                initial: 7,
                ttl: Ttl::Never,
            },
            Op::Delete(&del),
            Op::Delete(&miss),
            Op::Touch {
                key: &hit,
                ttl: Ttl::secs(100),
            },
            Op::Touch {
                key: &miss,
                ttl: Ttl::secs(100),
            },
            Op::Get(&hit),
            Op::Get(&num),
        ];
        // Every other kind of the op table (a new op, until a case above
        // is written for it) joins the batch once, on a key of its own,
        // with fixed arguments (`Fixed`), but the two that need a CAS id
        // read first: `pipeline_cas_ops` has them.
        let by_cas = [OpKind::Cas, OpKind::DeleteCas];
        let missing: Vec<OpKind> = OpKind::ALL
            .iter()
            .copied()
            .filter(|kind| !by_cas.contains(kind) && !ops.iter().any(|op| op.kind() == *kind))
            .collect();
        let extra_keys: Vec<_> = missing
            .iter()
            .map(|kind| key(&format!("x-{}", kind.name())))
            .collect();
        let extra = missing
            .iter()
            .zip(&extra_keys)
            .map(|(&kind, key)| Op::build(kind, &mut Fixed(key)));
        let all: Vec<Op<'_>> = ops.iter().copied().chain(extra).collect();
        let replies = if piped {
            s.pipeline(&all)
        } else {
            all.iter().map(|op| s.execute(op)).collect()
        };
        let mut out: Vec<String> = replies[..ops.len()].iter().map(shape).collect();
        out.push(format!("aoa={:?}", value(env, &aoa).map(String::from_utf8)));
        out.push(format!("new={:?}", value(env, &new).map(String::from_utf8)));
        out.extend(replies[ops.len()..].iter().map(shape));
        out
    };
    let piped = run("p1:", true);
    let one_by_one = run("p2:", false);
    assert_eq!(piped, one_by_one, "{}", env.name);
    let expected = [
        "item \"v\"",
        "Item(None)",
        "cas",
        "Stored(NotStored)",
        "stored",
        "Stored(NotStored)",
        "stored",
        "Applied(true)",
        "Applied(false)",
        "Applied(true)",
        "Applied(false)",
        "Done",
        "Done",
        "Counter(Some(15))",
        "Counter(None)",
        "Counter(Some(0))",
        "Counter(None)",
        "Value(7)",
        "Value(8)",
        "Applied(true)",
        "Applied(false)",
        "Applied(true)",
        "Applied(false)",
        "item \"<v>\"",
    ];
    assert_eq!(&piped[..expected.len()], expected, "{}", env.name);
    assert!(piped[24].starts_with("item \"0"), "{}", piped[24]);
    assert_eq!(piped[25], "aoa=Some(Ok(\"12\"))");
    assert_eq!(piped[26], "new=Some(Ok(\"s\"))");
}

/// cas and delete_cas in one batch, matching, stale and missing: the same
/// replies as one by one.
pub fn pipeline_cas_ops(env: &Env) {
    let s = env.s();
    let run = |prefix: &str, piped: bool| -> Vec<String> {
        let key = |n: &str| k(&format!("{prefix}{n}"));
        let [hit, hit2, miss, dc, dc2] = ["hit", "hit2", "miss", "dc", "dc2"].map(key);
        let hit_cas = s.set(&hit, b"v", Ttl::Never).unwrap();
        let hit2_cas = s.set(&hit2, b"v", Ttl::Never).unwrap();
        s.set(&hit2, b"w", Ttl::Never).unwrap();
        let dc_cas = s.set(&dc, b"x", Ttl::Never).unwrap();
        let dc2_cas = s.set(&dc2, b"x", Ttl::Never).unwrap();
        s.set(&dc2, b"y", Ttl::Never).unwrap();
        let ops = [
            Op::Cas {
                key: &hit,
                value: b"new",
                ttl: Ttl::Never,
                cas: hit_cas,
            },
            Op::Cas {
                key: &hit2,
                value: b"no",
                ttl: Ttl::Never,
                cas: hit2_cas,
            },
            Op::Cas {
                key: &miss,
                value: b"no",
                ttl: Ttl::Never,
                cas: 1,
            },
            Op::DeleteCas {
                key: &dc,
                cas: dc_cas,
            },
            Op::DeleteCas {
                key: &dc2,
                cas: dc2_cas,
            },
            Op::DeleteCas { key: &miss, cas: 1 },
            Op::Get(&hit),
            Op::Get(&dc),
            Op::Get(&dc2),
        ];
        let replies = if piped {
            s.pipeline(&ops)
        } else {
            ops.iter().map(|op| s.execute(op)).collect()
        };
        replies.iter().map(shape).collect()
    };
    let piped = run("pc1:", true);
    assert_eq!(piped, run("pc2:", false), "{}", env.name);
    assert_eq!(
        piped,
        [
            "cas stored",
            "CasOutcome(Exists)",
            "CasOutcome(NotFound)",
            "Deleted(Deleted)",
            "Deleted(Exists)",
            "Deleted(NotFound)",
            "item \"new\"",
            "Item(None)",
            "item \"y\"",
        ],
        "{}",
        env.name
    );
}

/// Ops on the same key in one batch apply in order, also when one of them
/// must be finished after its payload (an append that misses, an
/// append_or_add creating its key on memcached before 1.6.20).
pub fn pipeline_same_key_keeps_order(env: &Env) {
    let s = env.s();
    let run = |prefix: &str, piped: bool| -> Vec<String> {
        let key = |n: &str| k(&format!("{prefix}{n}"));
        let [a, b, c, d] = ["a", "b", "c", "d"].map(key);
        let ops = [
            Op::Append {
                key: &a,
                value: b"x",
            },
            Op::Set {
                key: &a,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::AppendOrAdd {
                key: &b,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::Delete(&b),
            Op::AppendOrAdd {
                key: &c,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::Get(&c),
            Op::Prepend {
                key: &d,
                value: b"<",
            },
            Op::AppendOrAdd {
                key: &d,
                value: b"2",
                ttl: Ttl::Never,
            },
            Op::Prepend {
                key: &d,
                value: b"<",
            },
            Op::Get(&d),
        ];
        let replies = if piped {
            s.pipeline(&ops)
        } else {
            ops.iter().map(|op| s.execute(op)).collect()
        };
        let mut out: Vec<String> = replies.iter().map(shape).collect();
        for key in [&a, &b, &c, &d] {
            out.push(format!("{:?}", value(env, key).map(String::from_utf8)));
        }
        out
    };
    let piped = run("o1:", true);
    assert_eq!(piped, run("o2:", false), "{}", env.name);
    assert_eq!(
        piped,
        [
            "Applied(false)",
            "cas",
            "Done",
            "Applied(true)",
            "Done",
            "item \"1\"",
            "Applied(false)",
            "Done",
            "Applied(true)",
            "item \"<2\"",
            "Some(Ok(\"v\"))",
            "None",
            "Some(Ok(\"1\"))",
            "Some(Ok(\"<2\"))",
        ]
    );
}

/// A failing op fails alone: the ops around it (quiet or not, on the same
/// server) keep their own results.
pub fn pipeline_errors_are_per_op(env: &Env) {
    let s = env.s();
    let (text, n, d, big) = (k("pe:text"), k("pe:n"), k("pe:d"), k("pe:big"));
    s.set(&text, b"abc", Ttl::Never).unwrap();
    s.set(&n, b"1", Ttl::Never).unwrap();
    s.set(&d, b"x", Ttl::Never).unwrap();
    let huge = vec![b'x'; mcds_core::DEFAULT_ITEM_SIZE_LIMIT];
    let ops = [
        Op::Delete(&d),
        Op::Incr {
            key: &text,
            delta: 1,
        },
        Op::Get(&n),
        Op::Set {
            key: &big,
            value: &huge,
            ttl: Ttl::Never,
        },
        Op::IncrOrInit {
            key: &text,
            delta: 1,
            initial: 0,
            ttl: Ttl::Never,
        },
        Op::Incr { key: &n, delta: 1 },
        Op::Append {
            key: &text,
            value: b"x",
        },
    ];
    let mut r = s.pipeline(&ops).into_iter();
    assert_eq!(r.next().unwrap().unwrap(), Reply::Applied(true));
    assert_non_numeric(r.next().unwrap());
    assert_eq!(
        r.next().unwrap().unwrap().item().unwrap().unwrap().value,
        b"1"
    );
    assert_too_large(r.next().unwrap());
    assert_non_numeric(r.next().unwrap());
    assert_eq!(r.next().unwrap().unwrap(), Reply::Counter(Some(2)));
    assert_eq!(r.next().unwrap().unwrap(), Reply::Applied(true));
    assert!(r.next().is_none());
    assert_eq!(value(env, &text).unwrap(), b"abcx");
    assert_eq!(value(env, &d), None);
    assert_eq!(value(env, &big), None);
    // The store is still in step afterwards.
    assert_eq!(s.incr(&n, 1).unwrap(), Some(3));
}

/// A batch larger than one payload (thousands of ops) is cut into payloads
/// and every op gets its own reply; an empty batch costs nothing.
pub fn pipeline_large_batch(env: &Env) {
    let s = env.s();
    let keys: Vec<Key> = (0..3000).map(|i| k(&format!("pl:{i:05}"))).collect();
    let ops: Vec<Op<'_>> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| Op::IncrOrInit {
            key,
            delta: 1,
            initial: i as u64,
            ttl: Ttl::Never,
        })
        .collect();
    for (i, r) in s.pipeline(&ops).into_iter().enumerate() {
        assert_eq!(r.unwrap().value().unwrap(), i as u64);
    }
    let gets: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
    let (replies, t) = traffic::measure(|| s.pipeline(&gets));
    for (i, r) in replies.into_iter().enumerate() {
        let item = r.unwrap().item().unwrap().unwrap();
        assert_eq!(item.counter(), Some(i as u64));
    }
    assert!(t.round_trips >= 1 && t.commands == 3000, "{t:?}");
    // Distinct keys: one round trip per server.
    let ten: Vec<Op<'_>> = keys[..10]
        .iter()
        .map(|key| Op::Incr { key, delta: 1 })
        .collect();
    let (_, t) = traffic::measure(|| s.pipeline(&ten));
    let servers = env.servers.len().max(1) as u64;
    assert!(t.round_trips <= servers, "{}: {t:?}", env.name);
    let (empty, t) = traffic::measure(|| s.pipeline(&[]));
    assert!(empty.is_empty());
    assert_eq!(t.round_trips, 0);
}
