//! A build without the `memcached` feature: only `memory://` opens, and a
//! URL of a network store is refused with the feature it needs (in place
//! of `network.rs`).

use mcds_core::{Result, Scope};

use crate::{UrlKind, bad};

/// Stands where the network options would be read.
pub(crate) struct Network;

impl Network {
    /// `memory://` only: a network store's URL is refused here.
    pub(crate) fn new(memory: bool, _text: bool, _tls: bool) -> Result<Network> {
        if !memory {
            return Err(bad(
                "memcached servers need the `memcached` feature of mcds (or mcds-url), which this build leaves out: use memory:// or enable the feature".into(),
            ));
        }
        Ok(Network)
    }

    /// Every network option is refused on `memory://`.
    pub(crate) fn take(&mut self, name: &str, _value: Option<String>) -> Result<()> {
        Err(bad(format!(
            "store URL option {name} is for memcached://, not memory://"
        )))
    }

    /// Never reached: [`Network::new`] refuses every network URL.
    pub(crate) fn kind(
        self,
        _servers: Vec<String>,
        _item_size_limit: Option<usize>,
        _credentials: Option<(String, String)>,
    ) -> Result<UrlKind> {
        Err(mcds_core::Error::Internal(
            "a network store URL was read without the memcached feature".into(),
        ))
    }
}

/// No network store to open.
pub(crate) fn open(_kind: &UrlKind) -> Option<Result<Scope>> {
    None
}
