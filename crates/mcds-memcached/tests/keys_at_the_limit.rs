//! From an adversarial review: keys at memcached's 250-byte limit (ASCII and multi-byte
//! UTF-8) through every op, alone and pipelined, sync and async: the text
//! pairs (`add`, `replace`, `cas`, `append`, `prepend`, `append_or_add`)
//! carry the key on two command lines.

use mcds_core::{CasOutcome, DeleteOutcome, Key, Op, Reply, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

#[test]
fn keys_at_the_length_limit_through_every_op() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ascii = "k".repeat(249);
    let utf8 = "é".repeat(124); // 248 bytes
    let mut checked = 0;
    for (n, base) in [ascii, utf8].iter().enumerate() {
        for mode in 0..3 {
            let key =
                Key::new(format!("{base}{mode}{}", "x".repeat(250 - base.len() - 1))).unwrap();
            assert_eq!(key.len(), 250);
            let run = |op: Op<'_>| -> Reply {
                match mode {
                    0 => store.execute(&op).unwrap(),
                    1 => rt.block_on(store.execute_async(&op)).unwrap(),
                    _ => store
                        .pipeline(&[Op::Get(&key), op, Op::Get(&key)])
                        .remove(1)
                        .unwrap(),
                }
            };
            let v = b"v\r\nEN\r\n";
            assert!(matches!(
                run(Op::Add {
                    key: &key,
                    value: v,
                    ttl: Ttl::secs(60)
                }),
                Reply::Stored(Stored::Stored(_))
            ));
            assert!(matches!(
                run(Op::Add {
                    key: &key,
                    value: v,
                    ttl: Ttl::secs(60)
                }),
                Reply::Stored(Stored::NotStored)
            ));
            let Reply::Stored(Stored::Stored(id)) = run(Op::Replace {
                key: &key,
                value: b"r",
                ttl: Ttl::secs(60),
            }) else {
                panic!()
            };
            assert_eq!(
                store.get(&key).unwrap().unwrap().cas,
                id,
                "{n}/{mode}: replace's id"
            );
            let Reply::CasOutcome(CasOutcome::Stored(id2)) = run(Op::Cas {
                key: &key,
                value: b"c",
                ttl: Ttl::secs(60),
                cas: id,
            }) else {
                panic!()
            };
            assert_eq!(
                run(Op::Cas {
                    key: &key,
                    value: b"z",
                    ttl: Ttl::secs(60),
                    cas: id
                }),
                Reply::CasOutcome(CasOutcome::Exists)
            );
            assert_eq!(
                run(Op::Append {
                    key: &key,
                    value: b">"
                }),
                Reply::Applied(true)
            );
            assert_eq!(
                run(Op::Prepend {
                    key: &key,
                    value: b"<"
                }),
                Reply::Applied(true)
            );
            assert_eq!(
                run(Op::AppendOrAdd {
                    key: &key,
                    value: b"+",
                    ttl: Ttl::secs(60)
                }),
                Reply::Done
            );
            assert_eq!(store.get(&key).unwrap().unwrap().value, b"<c>+");
            assert_eq!(
                run(Op::DeleteCas {
                    key: &key,
                    cas: id2
                }),
                Reply::Deleted(DeleteOutcome::Exists)
            );
            let cur = store.get(&key).unwrap().unwrap().cas;
            assert_eq!(
                run(Op::Touch {
                    key: &key,
                    ttl: Ttl::secs(30)
                }),
                Reply::Applied(true)
            );
            assert_eq!(
                run(Op::DeleteCas {
                    key: &key,
                    cas: cur
                }),
                Reply::Deleted(DeleteOutcome::Deleted)
            );
            assert_eq!(
                run(Op::Append {
                    key: &key,
                    value: b">"
                }),
                Reply::Applied(false)
            );
            assert_eq!(
                run(Op::AppendOrAdd {
                    key: &key,
                    value: b"0",
                    ttl: Ttl::secs(60)
                }),
                Reply::Done
            );
            assert_eq!(
                run(Op::Incr {
                    key: &key,
                    delta: 5
                }),
                Reply::Counter(Some(5))
            );
            assert_eq!(
                run(Op::IncrOrInit {
                    key: &key,
                    delta: 1,
                    initial: 9,
                    ttl: Ttl::secs(60)
                }),
                Reply::Value(6)
            );
            assert_eq!(
                run(Op::Decr {
                    key: &key,
                    delta: 10
                }),
                Reply::Counter(Some(0))
            );
            assert_eq!(run(Op::Delete(&key)), Reply::Applied(true));
            assert_eq!(run(Op::Delete(&key)), Reply::Applied(false));
            checked += 1;
        }
    }
    println!("{checked} key/mode combinations, 19 ops each");
}
