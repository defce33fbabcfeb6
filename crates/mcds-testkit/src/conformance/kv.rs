//! Reads and writes of whole values: get, get_multi, set, add, replace,
//! append, prepend, append_or_add, delete; flags and the backend's name.

use mcds_core::{Clock, Key, Stored, Ttl};

use super::{Env, k, value};

/// A missing key reads as `None`.
pub fn get_miss(env: &Env) {
    assert_eq!(env.s().get(&k("nothing")).unwrap(), None);
}

/// set then get returns the value and flags 0 (the CAS id it returns:
/// [`writes_return_the_items_cas`]).
pub fn set_then_get(env: &Env) {
    let key = k("a");
    env.s().set(&key, b"hello", Ttl::Never).unwrap();
    let item = env.s().get(&key).unwrap().unwrap();
    assert_eq!(item.value, b"hello");
    assert_eq!(item.flags, 0);
}

/// set overwrites.
pub fn set_overwrites(env: &Env) {
    let key = k("a");
    env.s().set(&key, b"one", Ttl::Never).unwrap();
    env.s().set(&key, b"two", Ttl::secs(100)).unwrap();
    assert_eq!(value(env, &key).unwrap(), b"two");
}

/// set, add and replace return the CAS id of the item they wrote: not 0,
/// the one get reads, a new one on every write.
pub fn writes_return_the_items_cas(env: &Env) {
    let key = k("wcas");
    let c1 = env.s().set(&key, b"one", Ttl::Never).unwrap();
    assert_ne!(c1, 0);
    assert_eq!(env.s().get(&key).unwrap().unwrap().cas, c1);
    let c2 = env.s().set(&key, b"two", Ttl::Never).unwrap();
    assert_ne!(c1, c2);
    assert_eq!(env.s().get(&key).unwrap().unwrap().cas, c2);
    let Stored::Stored(c3) = env.s().replace(&key, b"three", Ttl::Never).unwrap() else {
        panic!("replace on an existing key must store");
    };
    assert!(c3 != c2 && c3 != 0);
    assert_eq!(env.s().get(&key).unwrap().unwrap().cas, c3);
    let added = k("wcas-add");
    let Stored::Stored(c4) = env.s().add(&added, b"v", Ttl::Never).unwrap() else {
        panic!("add on a missing key must store");
    };
    assert_ne!(c4, 0);
    assert_eq!(env.s().get(&added).unwrap().unwrap().cas, c4);
}

/// A zero-length value is a hit with an empty value, not a miss.
pub fn empty_value(env: &Env) {
    let key = k("empty");
    env.s().set(&key, b"", Ttl::Never).unwrap();
    assert_eq!(value(env, &key), Some(Vec::new()));
}

/// Every byte value survives, including CR, LF and NUL.
pub fn binary_value(env: &Env) {
    let key = k("bin");
    let v: Vec<u8> = (0..=255u8).chain(*b"\r\nEND\r\n").collect();
    env.s().set(&key, &v, Ttl::Never).unwrap();
    assert_eq!(value(env, &key).unwrap(), v);
}

/// UTF-8 keys and 250-byte keys work.
pub fn unusual_keys(env: &Env) {
    for key in [
        Key::new("ключ:キー:키").unwrap(),
        Key::new([b'x'; 250]).unwrap(),
        Key::new("~!@#$%^&*()_+{}|:\"<>?").unwrap(),
    ] {
        env.s().set(&key, b"v", Ttl::Never).unwrap();
        assert_eq!(value(env, &key).unwrap(), b"v", "{key:?}");
    }
}

/// get_multi: hits and misses in input order, duplicates answered twice.
pub fn get_multi_mixed(env: &Env) {
    env.s().set(&k("m1"), b"1", Ttl::Never).unwrap();
    env.s().set(&k("m3"), b"3", Ttl::Never).unwrap();
    let keys = [k("m1"), k("m2"), k("m3"), k("m1")];
    let got: Vec<Option<Vec<u8>>> = env
        .s()
        .get_multi(&keys)
        .unwrap()
        .into_iter()
        .map(|i| i.map(|i| i.value))
        .collect();
    assert_eq!(
        got,
        vec![
            Some(b"1".to_vec()),
            None,
            Some(b"3".to_vec()),
            Some(b"1".to_vec())
        ]
    );
}

/// get_multi of nothing is nothing.
pub fn get_multi_empty(env: &Env) {
    assert!(env.s().get_multi(&[]).unwrap().is_empty());
}

/// get_multi over 200 keys (spread over every server of a pool) agrees with get.
pub fn get_multi_many(env: &Env) {
    let keys: Vec<Key> = (0..200).map(|i| k(&format!("many{i}"))).collect();
    for (i, key) in keys.iter().enumerate() {
        if i % 3 != 0 {
            env.s()
                .set(key, i.to_string().as_bytes(), Ttl::Never)
                .unwrap();
        }
    }
    let items = env.s().get_multi(&keys).unwrap();
    assert_eq!(items.len(), 200);
    for (i, item) in items.iter().enumerate() {
        let single = env.s().get(&keys[i]).unwrap();
        assert_eq!(item, &single, "key {i}");
        assert_eq!(item.is_some(), i % 3 != 0);
    }
}

/// add on a missing key stores and returns the item's CAS.
pub fn add_miss_stores(env: &Env) {
    let key = k("add");
    let Stored::Stored(cas) = env.s().add(&key, b"v", Ttl::Never).unwrap() else {
        panic!("add on a missing key must store");
    };
    assert_eq!(env.s().get(&key).unwrap().unwrap().cas, cas);
}

/// add on an existing key is NotStored and keeps the value.
pub fn add_hit_not_stored(env: &Env) {
    let key = k("add");
    env.s().set(&key, b"first", Ttl::Never).unwrap();
    assert_eq!(
        env.s().add(&key, b"second", Ttl::Never).unwrap(),
        Stored::NotStored
    );
    assert_eq!(value(env, &key).unwrap(), b"first");
}

/// replace on a missing key is NotStored and creates nothing.
pub fn replace_miss(env: &Env) {
    let key = k("rep");
    assert_eq!(
        env.s().replace(&key, b"v", Ttl::Never).unwrap(),
        Stored::NotStored
    );
    assert_eq!(value(env, &key), None);
}

/// replace on an existing key stores.
pub fn replace_hit(env: &Env) {
    let key = k("rep");
    env.s().set(&key, b"old", Ttl::Never).unwrap();
    assert!(
        env.s()
            .replace(&key, b"new", Ttl::Never)
            .unwrap()
            .is_stored()
    );
    assert_eq!(value(env, &key).unwrap(), b"new");
}

/// append and prepend extend an existing value.
pub fn append_prepend_hit(env: &Env) {
    let key = k("cat");
    env.s().set(&key, b"mid", Ttl::Never).unwrap();
    assert!(env.s().append(&key, b">").unwrap());
    assert!(env.s().prepend(&key, b"<").unwrap());
    assert_eq!(value(env, &key).unwrap(), b"<mid>");
}

/// append and prepend on a missing key return false and create nothing.
pub fn append_prepend_miss(env: &Env) {
    let key = k("cat");
    assert!(!env.s().append(&key, b"x").unwrap());
    assert!(!env.s().prepend(&key, b"x").unwrap());
    assert_eq!(value(env, &key), None);
}

/// append_or_add creates a missing key, then appends.
pub fn append_or_add(env: &Env) {
    let key = k("aoa");
    env.s().append_or_add(&key, b"+a ", Ttl::secs(100)).unwrap();
    env.s().append_or_add(&key, b"+b ", Ttl::secs(100)).unwrap();
    assert_eq!(value(env, &key).unwrap(), b"+a +b ");
}

/// delete removes an existing key; a second delete is false.
pub fn delete(env: &Env) {
    let key = k("del");
    env.s().set(&key, b"v", Ttl::Never).unwrap();
    assert!(env.s().delete(&key).unwrap());
    assert!(!env.s().delete(&key).unwrap());
    assert_eq!(value(env, &key), None);
}

/// flags read back as 0 for values mcds writes.
pub fn flags_are_zero(env: &Env) {
    let key = k("flags");
    env.s().set(&key, b"v", Ttl::Never).unwrap();
    env.s().append(&key, b"w").unwrap();
    assert_eq!(env.s().get(&key).unwrap().unwrap().flags, 0);
}

/// The store's name is non-empty (used in messages).
pub fn backend_name(env: &Env) {
    assert!(!env.s().backend_name().is_empty());
    if let Some(clock) = &env.clock {
        assert!(clock.now_ms() > 0);
    }
}
