//! Time: touch, and items expiring after their TTL whichever op wrote them.

use std::time::Duration;

use mcds_core::Ttl;

use super::{Env, k, value};

/// touch on a missing key is false; on an existing one true.
pub fn touch(env: &Env) {
    let key = k("touch");
    assert!(!env.s().touch(&key, Ttl::secs(10)).unwrap());
    env.s().set(&key, b"v", Ttl::secs(10)).unwrap();
    assert!(env.s().touch(&key, Ttl::Never).unwrap());
    assert_eq!(value(env, &key).unwrap(), b"v");
}

/// Items expire after their TTL whichever op created them (cas:
/// [`cas_sets_the_ttl`]); touch, append
/// and incr keep or change the TTL as memcached does; long TTLs live.
/// (Sleeps about 2.2 s on real servers: the only sleeping case.)
pub fn expiry(env: &Env) {
    let s = env.s();
    let short = Ttl::secs(1);
    s.set(&k("x-set"), b"v", short).unwrap();
    s.add(&k("x-add"), b"v", short).unwrap();
    s.set(&k("x-rep"), b"v", Ttl::Never).unwrap();
    s.replace(&k("x-rep"), b"v2", short).unwrap();
    s.incr_or_init(&k("x-ioi"), 1, 1, short).unwrap();
    s.append_or_add(&k("x-aoa"), b"v", short).unwrap();
    // append keeps the TTL the item was created with.
    s.set(&k("x-app"), b"v", short).unwrap();
    s.append(&k("x-app"), b"w").unwrap();
    // incr keeps the TTL too.
    s.set(&k("x-inc"), b"1", short).unwrap();
    s.incr(&k("x-inc"), 1).unwrap();
    // touch extends.
    s.set(&k("x-touched"), b"v", short).unwrap();
    s.touch(&k("x-touched"), Ttl::secs(100)).unwrap();
    // incr_or_init on an existing counter does not change its TTL.
    s.set(&k("x-ioi-long"), b"1", Ttl::secs(100)).unwrap();
    s.incr_or_init(&k("x-ioi-long"), 1, 1, short).unwrap();
    s.set(&k("x-long"), b"v", Ttl::secs(100)).unwrap();
    s.set(&k("x-never"), b"v", Ttl::Never).unwrap();
    // 40 days must mean 40 days, not 1970 (memcached reads > 30 days as a
    // Unix time).
    s.set(&k("x-40days"), b"v", Ttl::secs(40 * 86_400)).unwrap();
    s.add(&k("x-40days-add"), b"v", Ttl::secs(40 * 86_400))
        .unwrap();
    s.incr_or_init(&k("x-40days-ioi"), 1, 1, Ttl::secs(40 * 86_400))
        .unwrap();

    env.advance(Duration::from_millis(2200));

    for gone in [
        "x-set", "x-add", "x-rep", "x-ioi", "x-aoa", "x-app", "x-inc",
    ] {
        assert_eq!(value(env, &k(gone)), None, "{gone} should have expired");
    }
    for alive in [
        "x-touched",
        "x-ioi-long",
        "x-long",
        "x-never",
        "x-40days",
        "x-40days-add",
        "x-40days-ioi",
    ] {
        assert!(value(env, &k(alive)).is_some(), "{alive} should be alive");
    }
    // Expired keys behave as missing for every op.
    assert!(!s.append(&k("x-set"), b"z").unwrap());
    assert_eq!(s.incr(&k("x-inc"), 1).unwrap(), None);
    assert!(
        s.add(&k("x-add"), b"again", Ttl::Never)
            .unwrap()
            .is_stored()
    );
}

/// A cas write sets the item's TTL like any write. (Sleeps about 2.2 s on
/// real servers.)
pub fn cas_sets_the_ttl(env: &Env) {
    let s = env.s();
    let cas = s.set(&k("xc-cas"), b"v", Ttl::Never).unwrap();
    s.cas(&k("xc-cas"), b"v2", Ttl::secs(1), cas).unwrap();
    let cas = s.set(&k("xc-long"), b"v", Ttl::secs(1)).unwrap();
    s.cas(&k("xc-long"), b"v2", Ttl::secs(40 * 86_400), cas)
        .unwrap();
    env.advance(Duration::from_millis(2200));
    assert_eq!(value(env, &k("xc-cas")), None, "xc-cas should have expired");
    assert_eq!(value(env, &k("xc-long")).unwrap(), b"v2");
}
