//! [`QuorumStore`]: independent servers that a lock takes a majority of.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::op::{Op, Reply};
use crate::store::Store;

/// Independent stores (each one memcached server, never a hashed pool)
/// that a lock (`mcds_lock::Lock`) made from this store takes a
/// **majority** of: every lock name lives on all of them, so a
/// lock outlives the loss of any minority (1 of 3, 2 of 5). Nothing else
/// runs on a quorum: every [`Store`] operation is refused with
/// [`Error::Unsupported`], since a counter or a set on several
/// independent servers would have several values. Open the servers as
/// one pool (`memcached://a,b,c`) for the other structures.
///
/// The store URL `memcached://a:11211,b:11211,c:11211?quorum` makes one
/// (`mcds-url`); so does [`QuorumStore::new`].
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::{Key, MemoryStore, QuorumStore, Store};
///
/// let members: Vec<(String, Arc<dyn Store>)> = (0..3)
///     .map(|i| (format!("m{i}"), Arc::new(MemoryStore::new()) as Arc<dyn Store>))
///     .collect();
/// let quorum = QuorumStore::new(members)?;
/// assert_eq!(quorum.majority(), 2);
/// // Only locks run on it:
/// assert!(quorum.get(&Key::new("k")?).is_err());
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Debug)]
pub struct QuorumStore {
    members: Vec<QuorumMember>,
    /// The members' names, sorted and joined: what every member records
    /// (see [`QuorumStore::record`]).
    record: String,
}

/// One server of a [`QuorumStore`]: its name (the address the client was
/// given) and its store.
#[derive(Clone, Debug)]
pub struct QuorumMember {
    /// The server as the client names it (`host:port`, `unix:/path`).
    pub name: String,
    /// Its store, on that one server.
    pub store: Arc<dyn Store>,
}

/// The fewest members of a quorum: with fewer than 3, losing one server
/// loses the majority, and a single server's lock does as well.
pub const MIN_QUORUM: usize = 3;

/// The most members of a quorum (every request goes to all of them).
pub const MAX_QUORUM: usize = 15;

impl QuorumStore {
    /// A quorum of `members`, each `(name, store)` with the store on that
    /// one server. 3 to 15 members, names distinct and not empty, else
    /// [`Error::InvalidArgument`]. An odd number is best: 4 members
    /// survive the loss of 1, as 3 do.
    pub fn new(members: Vec<(String, Arc<dyn Store>)>) -> Result<QuorumStore> {
        if !(MIN_QUORUM..=MAX_QUORUM).contains(&members.len()) {
            return Err(Error::InvalidArgument(format!(
                "a quorum has {MIN_QUORUM} to {MAX_QUORUM} servers (3 or 5 are usual), not {}: give each server of the quorum, or use one server or a pool without `quorum`",
                members.len()
            )));
        }
        let mut names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        if let Some(empty) = names.iter().find(|n| n.is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "a quorum member has an empty name {empty:?}"
            )));
        }
        if let Some(pair) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::InvalidArgument(format!(
                "server {} is listed twice in the quorum: a majority must be of distinct servers",
                pair[0]
            )));
        }
        if let Some(bad) = names
            .iter()
            .find(|n| !n.bytes().all(|b| (0x21..0x7f).contains(&b)))
        {
            return Err(Error::InvalidArgument(format!(
                "a quorum member's name must be printable ASCII without spaces, not {bad:?}"
            )));
        }
        let record = names.join(",");
        Ok(QuorumStore {
            members: members
                .into_iter()
                .map(|(name, store)| QuorumMember { name, store })
                .collect(),
            record,
        })
    }

    /// The members, in the order given.
    pub fn members(&self) -> &[QuorumMember] {
        &self.members
    }

    /// How many members make a majority: `members / 2 + 1`.
    pub fn majority(&self) -> usize {
        self.members.len() / 2 + 1
    }

    /// The members' names, sorted and joined with `,`: what a lock records
    /// on every member it uses, so that clients whose lists of servers
    /// differ are caught where their lists share a server (two lists
    /// with no server in common cannot be told apart from two quorums).
    pub fn record(&self) -> &str {
        &self.record
    }

    /// A quorum of the same members, each store passed through `wrap`
    /// (the C ABI makes each member's calls cancellable this way).
    pub fn map_members(&self, wrap: impl Fn(Arc<dyn Store>) -> Arc<dyn Store>) -> QuorumStore {
        QuorumStore {
            members: self
                .members
                .iter()
                .map(|m| QuorumMember {
                    name: m.name.clone(),
                    store: wrap(Arc::clone(&m.store)),
                })
                .collect(),
            record: self.record.clone(),
        }
    }
}

/// What a quorum says to any operation but a lock's.
fn locks_only(op: &Op<'_>) -> Error {
    let _ = op;
    Error::Unsupported {
        op: "a store operation on a quorum",
        backend: "a quorum of independent servers, which holds locks only",
        hint: "make a Lock from it; for counters, sets and the other structures open the servers as one pool (memcached://a,b,c without `quorum`)",
    }
}

impl Store for QuorumStore {
    fn backend_name(&self) -> &'static str {
        "quorum"
    }

    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        Err(locks_only(op))
    }

    fn supports_cas(&self, key: &crate::Key) -> Result<bool> {
        let _ = key;
        Ok(true)
    }

    fn quorum(&self) -> Option<&QuorumStore> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    fn members(names: &[&str]) -> Vec<(String, Arc<dyn Store>)> {
        names
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    Arc::new(MemoryStore::new()) as Arc<dyn Store>,
                )
            })
            .collect()
    }

    #[test]
    fn a_majority_is_more_than_half() {
        for (n, majority) in [(3, 2), (4, 3), (5, 3), (7, 4)] {
            let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            assert_eq!(
                QuorumStore::new(members(&refs)).unwrap().majority(),
                majority
            );
        }
    }

    #[test]
    fn too_few_too_many_or_repeated_servers_are_refused() {
        assert!(QuorumStore::new(members(&["a", "b"])).is_err());
        assert!(QuorumStore::new(members(&["a", "b", "a"])).is_err());
        let many: Vec<String> = (0..16).map(|i| format!("s{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(QuorumStore::new(members(&refs)).is_err());
        assert!(QuorumStore::new(members(&["a", "b c", "d"])).is_err());
    }

    #[test]
    fn the_record_does_not_depend_on_the_order_given() {
        let a = QuorumStore::new(members(&["c:1", "a:1", "b:1"])).unwrap();
        let b = QuorumStore::new(members(&["a:1", "b:1", "c:1"])).unwrap();
        assert_eq!(a.record(), b.record());
        assert_eq!(a.record(), "a:1,b:1,c:1");
    }

    #[test]
    fn every_store_operation_is_refused() {
        let q = QuorumStore::new(members(&["a", "b", "c"])).unwrap();
        let key = crate::Key::new("k").unwrap();
        assert!(matches!(
            q.set(&key, b"v", crate::Ttl::Never),
            Err(Error::Unsupported { .. })
        ));
        assert!(q.quorum().is_some());
    }
}
