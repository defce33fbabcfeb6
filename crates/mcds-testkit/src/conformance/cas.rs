//! Compare-and-swap: cas, delete_cas, how every modification changes the
//! CAS id, and the update helper (a CAS loop).

use mcds_core::{CasOutcome, DeleteOutcome, Ttl, Updated};

use super::{Env, bump, k, value};

/// cas with the current CAS id stores and returns the new id.
pub fn cas_match(env: &Env) {
    let key = k("cas");
    let c1 = env.s().set(&key, b"1", Ttl::Never).unwrap();
    let CasOutcome::Stored(c2) = env.s().cas(&key, b"2", Ttl::Never, c1).unwrap() else {
        panic!("cas with the current id must store");
    };
    assert_ne!(c1, c2);
    let item = env.s().get(&key).unwrap().unwrap();
    assert_eq!((item.value.as_slice(), item.cas), (&b"2"[..], c2));
}

/// cas with a stale CAS id is Exists and keeps the value.
pub fn cas_mismatch(env: &Env) {
    let key = k("cas");
    let c1 = env.s().set(&key, b"1", Ttl::Never).unwrap();
    env.s().set(&key, b"other", Ttl::Never).unwrap();
    assert_eq!(
        env.s().cas(&key, b"2", Ttl::Never, c1).unwrap(),
        CasOutcome::Exists
    );
    assert_eq!(value(env, &key).unwrap(), b"other");
}

/// cas on a missing key is NotFound and creates nothing.
pub fn cas_missing(env: &Env) {
    let key = k("cas");
    assert_eq!(
        env.s().cas(&key, b"2", Ttl::Never, 12345).unwrap(),
        CasOutcome::NotFound
    );
    assert_eq!(value(env, &key), None);
}

/// append, prepend, incr and touch-free reads: every modification changes
/// the CAS id, so an old id no longer matches.
pub fn cas_changes_on_every_modification(env: &Env) {
    let key = k("casmod");
    let mut last = env.s().set(&key, b"1", Ttl::Never).unwrap();
    let mut check = |what: &str| {
        let now = env.s().get(&key).unwrap().unwrap().cas;
        assert_ne!(now, last, "{what} must change the CAS id");
        last = now;
    };
    env.s().append(&key, b"0").unwrap();
    check("append");
    env.s().prepend(&key, b"1").unwrap();
    check("prepend");
    env.s().incr(&key, 1).unwrap();
    check("incr");
    env.s().decr(&key, 1).unwrap();
    check("decr");
    env.s().incr_or_init(&key, 1, 0, Ttl::Never).unwrap();
    check("incr_or_init");
}

/// delete_cas with the current CAS id deletes.
pub fn delete_cas_match(env: &Env) {
    let key = k("dcas");
    let cas = env.s().set(&key, b"v", Ttl::Never).unwrap();
    assert_eq!(
        env.s().delete_cas(&key, cas).unwrap(),
        DeleteOutcome::Deleted
    );
    assert_eq!(value(env, &key), None);
    // The key is really gone: add works at once.
    assert!(env.s().add(&key, b"next", Ttl::Never).unwrap().is_stored());
}

/// delete_cas with a stale CAS id keeps the (new) value.
pub fn delete_cas_mismatch(env: &Env) {
    let key = k("dcas");
    let old = env.s().set(&key, b"v", Ttl::Never).unwrap();
    env.s().set(&key, b"new owner", Ttl::Never).unwrap();
    assert_eq!(
        env.s().delete_cas(&key, old).unwrap(),
        DeleteOutcome::Exists
    );
    assert_eq!(value(env, &key).unwrap(), b"new owner");
}

/// delete_cas on a missing key is NotFound.
pub fn delete_cas_missing(env: &Env) {
    assert_eq!(
        env.s().delete_cas(&k("dcas"), 1).unwrap(),
        DeleteOutcome::NotFound
    );
}

/// update creates, modifies and declines.
pub fn update_helper(env: &Env) {
    let key = k("upd");
    for _ in 0..3 {
        env.s().update(&key, Ttl::Never, 10, &mut bump).unwrap();
    }
    assert_eq!(value(env, &key).unwrap(), b"3");
    let out = env.s().update(&key, Ttl::Never, 10, &mut |_| None).unwrap();
    assert_eq!(out, Updated::Unchanged);
}
