//! Limits and input: the item size limit on every write, and keys that
//! could inject commands.

use mcds_core::backend::item_size;
use mcds_core::{Error, Key, Ttl};

use super::{Env, assert_too_large, k, value};

/// The largest value that fits under `key` with the default 1 MiB limit.
fn max_value_len(key: &Key) -> usize {
    mcds_core::DEFAULT_ITEM_SIZE_LIMIT - item_size(key.len(), 0)
}

/// An append that would grow the item past the limit is ValueTooLarge and
/// leaves the value intact.
pub fn append_past_limit(env: &Env) {
    let key = k("bigcat");
    let big = vec![b'x'; max_value_len(&key) - 10];
    env.s().set(&key, &big, Ttl::Never).unwrap();
    assert_too_large(env.s().append(&key, &[b'y'; 100]));
    assert_too_large(env.s().append_or_add(&key, &[b'y'; 100], Ttl::Never));
    assert_eq!(value(env, &key).unwrap().len(), big.len());
    assert!(
        env.s().append(&key, &[b'y'; 10]).unwrap(),
        "exactly full still fits"
    );
}

/// The largest value that fits (1 MiB minus key and 59 bytes of item
/// overhead) stores; one byte more is ValueTooLarge and keeps the old value.
pub fn item_size_limit(env: &Env) {
    let key = k("limit");
    let fits = vec![b'x'; max_value_len(&key)];
    env.s().set(&key, &fits, Ttl::Never).unwrap();
    assert_eq!(value(env, &key).unwrap().len(), fits.len());
    let over = vec![b'y'; fits.len() + 1];
    assert_too_large(env.s().set(&key, &over, Ttl::Never));
    assert_eq!(value(env, &key).unwrap(), fits, "old value intact");
}

/// Every write refuses an oversized value and nothing is created.
pub fn value_too_large_every_write(env: &Env) {
    let key = k("toolarge");
    let over = vec![b'z'; 2 * 1024 * 1024];
    assert_too_large(env.s().set(&key, &over, Ttl::Never));
    assert_too_large(env.s().add(&key, &over, Ttl::Never));
    assert_too_large(env.s().replace(&key, &over, Ttl::Never));
    assert_too_large(env.s().cas(&key, &over, Ttl::Never, 1));
    assert_too_large(env.s().append_or_add(&key, &over, Ttl::Never));
    assert_eq!(value(env, &key), None);
    env.s().set(&key, b"small", Ttl::Never).unwrap();
    assert_too_large(env.s().append(&key, &over));
    assert_too_large(env.s().prepend(&key, &over));
    assert_eq!(value(env, &key).unwrap(), b"small");
}

/// Keys that could inject commands are refused before any store sees them.
pub fn bad_keys_rejected(env: &Env) {
    for bad in [
        &b"x\r\nflush_all"[..],
        b"a b",
        b"tab\there",
        b"nul\0",
        b"del\x7f",
        b"",
        &[b'k'; 251],
    ] {
        assert!(
            matches!(Key::new(bad), Err(Error::InvalidKey { .. })),
            "{bad:?}"
        );
    }
    // The store still works and holds nothing unexpected.
    assert_eq!(env.s().get(&k("flush_all")).unwrap(), None);
}
