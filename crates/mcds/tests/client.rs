//! The facade's one way in, on the embedded store and on real memcached:
//! `connect(url)` gives a `Client` that every structure takes, whose raw
//! key operations (sync and async) use its prefix.

use std::time::Duration;

use mcds::{CasOutcome, Client, Init, Stored};
use mcds_testkit::MemcachedServer;

fn clients(server: &MemcachedServer) -> Vec<Client> {
    vec![
        mcds::connect("memory://").unwrap(),
        mcds::connect(&format!("memcached://{}", server.addr())).unwrap(),
    ]
}

#[test]
fn raw_operations_round_trip_on_both_stores() {
    let server = MemcachedServer::start_default();
    for mc in clients(&server) {
        let ttl = Duration::from_secs(60);
        assert_eq!(mc.get("a").unwrap(), None);
        mc.set("a", b"1", ttl).unwrap();
        let item = mc.get("a").unwrap().expect("just set");
        assert_eq!(item.value, b"1");
        assert_eq!(mc.add("a", b"2", ttl).unwrap(), Stored::NotStored);
        assert!(matches!(
            mc.replace("a", b"3", ttl).unwrap(),
            Stored::Stored(_)
        ));
        assert_eq!(
            mc.cas("a", b"4", ttl, item.cas).unwrap(),
            CasOutcome::Exists
        );
        let now = mc.get("a").unwrap().unwrap();
        assert!(matches!(
            mc.cas("a", b"5", ttl, now.cas).unwrap(),
            CasOutcome::Stored(_)
        ));
        assert!(mc.append("a", b"6").unwrap());
        assert!(mc.prepend("a", b"0").unwrap());
        assert_eq!(mc.get("a").unwrap().unwrap().value, b"056");
        assert_eq!(mc.incr("n", 1).unwrap(), None);
        let init = Init {
            value: 10,
            ttl: Duration::ZERO,
        };
        assert_eq!(mc.incr_or_init("n", 5, init).unwrap(), 10);
        assert_eq!(mc.incr_or_init("n", 5, init).unwrap(), 15);
        assert_eq!(mc.decr("n", 20).unwrap(), Some(0));
        assert!(mc.touch("a", ttl).unwrap());
        let got = mc.get_multi(&["a", "missing", "n"]).unwrap();
        assert_eq!(
            got.iter().map(Option::is_some).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert!(mc.delete("a").unwrap());
        assert!(!mc.delete("a").unwrap());
        assert!(mc.get("bad key").is_err(), "a key with a space is refused");
    }
}

#[test]
fn the_async_twins_do_the_same() {
    let server = MemcachedServer::start_default();
    mcds_testkit::runtime().block_on(async {
        for mc in clients(&server) {
            mc.set_async("k", b"v", Duration::ZERO).await.unwrap();
            assert_eq!(mc.get_async("k").await.unwrap().unwrap().value, b"v");
            let hits = mcds::Counter::new(&mc, "hits").unwrap();
            hits.incr_async(2).await.unwrap();
            assert_eq!(hits.get_async().await.unwrap(), 2);
            assert!(mc.delete_async("k").await.unwrap());
        }
    });
}

#[test]
fn a_prefix_from_the_url_applies_to_raw_keys_and_structures() {
    let server = MemcachedServer::start_default();
    let url = format!("memcached://{}?prefix=app/", server.addr());
    let mc = mcds::connect(&url).unwrap();
    let plain = mcds::connect(&format!("memcached://{}", server.addr())).unwrap();
    mc.set("x", b"1", Duration::ZERO).unwrap();
    assert_eq!(plain.get("app/x").unwrap().unwrap().value, b"1");
    let hits = mcds::Counter::new(&mc, "hits").unwrap();
    hits.incr(3).unwrap();
    assert_eq!(
        mcds::Counter::new(&plain, "hits").unwrap().get().unwrap(),
        0
    );
    assert_eq!(mcds::Counter::new(&mc, "hits").unwrap().get().unwrap(), 3);
}

#[test]
fn clones_share_one_store() {
    let mc = Client::embedded();
    let other = mc.clone();
    other.set("shared", b"yes", Duration::ZERO).unwrap();
    assert_eq!(mc.get("shared").unwrap().unwrap().value, b"yes");
    assert!(format!("{mc:?}").contains("prefix"));
}
