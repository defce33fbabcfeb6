//! A deleted Table row never comes back without a new set. An adversarial
//! review found that a `Table::set` sent as a pipelined `replace` and `add`
//! of the same value stored it twice when another client deleted the row
//! between the two: a delete that was seen to remove the value was undone.
//! The writes now go one at a time, the second only if the first stored
//! nothing.
//!
//! The observer pipelines `mg <row> v` and `md <row>` on a raw socket.
//! Every value the writer sets is unique, so a value the observer read and
//! then deleted can only be read again if it was written again.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_memcached::MemcachedStore;
use mcds_set::Table;
use mcds_testkit::MemcachedServer;

#[test]
fn a_value_read_and_deleted_never_comes_back_without_a_new_set() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let table = Table::new(Arc::clone(&store), "hot").unwrap();
    let key = String::from_utf8(table.member_key(b"row").unwrap().as_bytes().to_vec()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (table, stop) = (table.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    table.set("row", format!("w{w}-{i}").as_bytes()).unwrap();
                    i += 1;
                }
                i
            })
        })
        .collect();
    let stream = std::net::TcpStream::connect(server.addr()).unwrap();
    let mut out = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut deleted: HashSet<Vec<u8>> = HashSet::new();
    let mut resurrected = Vec::new();
    let started = Instant::now();
    let mut rounds = 0u64;
    while started.elapsed() < Duration::from_secs(5) && resurrected.is_empty() {
        out.write_all(format!("mg {key} v\r\nmd {key}\r\n").as_bytes())
            .unwrap();
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let value = if let Some(len) = line.strip_prefix("VA ") {
            let len: usize = len.trim().parse().unwrap();
            let mut buf = vec![0; len + 2];
            reader.read_exact(&mut buf).unwrap();
            buf.truncate(len);
            Some(buf)
        } else {
            assert_eq!(line, "EN\r\n");
            None
        };
        line.clear();
        reader.read_line(&mut line).unwrap();
        let hit = line == "HD\r\n";
        assert!(hit || line == "NF\r\n", "{line:?}");
        if let Some(v) = value {
            if deleted.contains(&v) {
                resurrected.push((rounds, String::from_utf8_lossy(&v).into_owned()));
            }
            deleted.insert(v);
        }
        rounds += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let sets: u64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    println!(
        "{rounds} read+delete rounds, {sets} sets, {} distinct values read then deleted; resurrected: {resurrected:?}",
        deleted.len()
    );
    assert!(
        resurrected.is_empty(),
        "value {:?} was read and then deleted (mg + md in one batch), and read again later \
         though its single Table::set call had already been applied once: the set's add \
         re-created the row after the delete (round {})",
        resurrected[0].1,
        resurrected[0].0
    );
}
