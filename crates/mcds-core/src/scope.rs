//! Where a structure lives: a store, a key prefix and a clock.

use std::fmt;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result, display_bytes};
use crate::key::{Key, MAX_KEY_LEN, is_key_byte};
use crate::store::Store;

/// What every structure is built from: the [`Store`] it keeps its items in,
/// a key prefix, and the [`Clock`] its time-based logic reads.
///
/// A structure named `name` of kind `kind` keeps its items under keys
/// `<prefix><kind>:<name>:<part>` ([`Scope::key`]). The prefix lets several
/// applications share a memcached pool without their names meeting
/// (`"billing/"`, `"search/"`); the clock lets tests move time by hand
/// ([`ManualClock`](crate::ManualClock)) instead of sleeping.
///
/// Every structure constructor takes `impl Into<Scope>`, so a bare store is
/// a scope with no prefix and the system clock:
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::{Key, MemoryStore, Scope, Store};
///
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let plain = Scope::from(Arc::clone(&store));
/// assert_eq!(plain.key("counter", "hits", "value")?, Key::new("counter:hits:value")?);
///
/// let app = Scope::new(store).with_prefix("billing/")?;
/// assert_eq!(app.key("counter", "hits", "value")?, Key::new("billing/counter:hits:value")?);
/// assert!(Scope::from(Arc::clone(app.store())).with_prefix("bad prefix").is_err());
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Scope {
    store: Arc<dyn Store>,
    prefix: String,
    clock: Arc<dyn Clock>,
}

impl Scope {
    /// The scope of `store`: no prefix, the system clock.
    pub fn new(store: Arc<dyn Store>) -> Scope {
        Scope {
            store,
            prefix: String::new(),
            clock: Arc::new(SystemClock),
        }
    }

    /// This scope with keys prefixed by `prefix` (replacing any earlier
    /// prefix). The prefix must be made of key bytes (no whitespace or
    /// control bytes) and leave room for a name: an `InvalidKey` error
    /// otherwise, so a bad prefix fails here rather than on the first op.
    pub fn with_prefix(mut self, prefix: &str) -> Result<Scope> {
        if let Some(bad) = prefix.bytes().find(|&b| !is_key_byte(b)) {
            return Err(Error::InvalidKey {
                key: display_bytes(prefix.as_bytes()),
                reason: if bad.is_ascii_whitespace() {
                    "the key prefix contains whitespace"
                } else {
                    "the key prefix contains a control byte"
                },
            });
        }
        if prefix.len() >= MAX_KEY_LEN {
            return Err(Error::InvalidKey {
                key: display_bytes(prefix.as_bytes()),
                reason: "the key prefix leaves no room for a name (keys are at most 250 bytes)",
            });
        }
        self.prefix = prefix.to_string();
        Ok(self)
    }

    /// This scope with `clock` as the source of time.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Scope {
        self.clock = clock;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The key prefix (empty by default).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The key `<prefix><kind>:<name>:<part>` ([`Key::parts`]): the name is
    /// escaped, and an empty name or a key over 250 bytes is an error.
    pub fn key(&self, kind: &str, name: &str, part: impl fmt::Display) -> Result<Key> {
        Key::parts(&self.prefix, kind, name, part)
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("store", &self.store.backend_name())
            .field("prefix", &self.prefix)
            .field("clock", &self.clock)
            .finish()
    }
}

impl From<Arc<dyn Store>> for Scope {
    fn from(store: Arc<dyn Store>) -> Scope {
        Scope::new(store)
    }
}

/// A concrete store (`Arc<MemoryStore>`, `Arc<MemcachedStore>`, ...) is a
/// scope too, so `Counter::new(Arc::new(MemoryStore::new()), "hits")` works.
impl<S: Store + 'static> From<Arc<S>> for Scope {
    fn from(store: Arc<S>) -> Scope {
        Scope::new(store)
    }
}

impl From<&Scope> for Scope {
    fn from(scope: &Scope) -> Scope {
        scope.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, MemoryStore};

    #[test]
    fn prefix_is_validated_and_applied() {
        let scope = Scope::new(Arc::new(MemoryStore::new()));
        assert!(scope.clone().with_prefix("a\r\nb").is_err());
        assert!(scope.clone().with_prefix(&"p".repeat(250)).is_err());
        let app = scope.with_prefix("app/").unwrap();
        assert_eq!(app.prefix(), "app/");
        assert_eq!(
            app.key("lock", "a:b", "owner").unwrap().as_bytes(),
            b"app/lock:a%3Ab:owner"
        );
        assert!(app.key("lock", "", "owner").is_err());
    }

    #[test]
    fn clock_is_carried() {
        let clock = Arc::new(ManualClock::new(1_000));
        let scope = Scope::from(Arc::new(MemoryStore::new())).with_clock(clock.clone());
        clock.advance(std::time::Duration::from_secs(5));
        assert_eq!(scope.clock().now_ms(), clock.now_ms());
    }
}
