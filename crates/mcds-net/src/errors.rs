//! What memcached's `SERVER_ERROR` replies mean, the same for the meta and
//! the text protocol.

use mcds_core::{Error, Key};

/// The error a `SERVER_ERROR <message>` to a write on `key` means when it
/// is about the item: [`Error::ValueTooLarge`] (the item is over the
/// server's `-I`, `limit` as configured) or [`Error::OutOfMemory`] (the
/// server could not make room: `-M`, or a slab class without pages).
/// `None` for any other message, which the caller reports as it is.
///
/// memcached words these differently per command: "object too large for
/// cache", "out of memory storing object" (`ms`, `set`), "Out of memory
/// allocating new item" (`ma` creating a counter); the words are matched
/// case-insensitively.
pub fn item_error(key: &Key, message: &str, limit: usize) -> Option<Error> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("too large") {
        Some(Error::ValueTooLarge {
            key: key.display(),
            size: 0,
            limit,
        })
    } else if lower.contains("out of memory") {
        Some(Error::OutOfMemory { key: key.display() })
    } else {
        None
    }
}
