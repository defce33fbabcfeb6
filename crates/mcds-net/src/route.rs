//! Key placement across a pool: rendezvous hashing over a stable hash (the
//! default), or libmemcached's ketama ([`ketama`](crate::ketama)).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::ketama::Continuum;

/// How a store places keys on the servers of a pool, set with the
/// backends' `Builder::distribution` (`mcds-memcached` and `mcds-text`
/// alike); [`Router`] is the placement it computes. A single server owns
/// every key either way.
///
/// ```
/// use mcds_net::{Distribution, Router};
///
/// // The same servers, in the same order, as the PHP and Python apps give
/// // php-memcached (OPT_LIBKETAMA_COMPATIBLE) and pylibmc (ketama_weighted).
/// let servers = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"].map(String::from);
/// let router = Router::new(Distribution::Ketama, &servers);
/// assert!(router.server_for(b"user:42") < 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Distribution {
    /// Rendezvous hashing over XXH3-64 ([`route`](crate::route())): simple
    /// to reproduce in any language, and adding or removing a server moves
    /// only that server's share of the keys. The default.
    #[default]
    Rendezvous,
    /// libmemcached's MD5 ketama ([`ketama`](crate::ketama)), as
    /// php-memcached places keys with `Memcached::OPT_LIBKETAMA_COMPATIBLE`
    /// and pylibmc with `behaviors={"ketama_weighted": True}`: for a pool
    /// whose keys PHP or Python applications read and write too. Adding or
    /// removing a server also moves only about its share of the keys.
    Ketama,
}

impl Distribution {
    /// Its name in store URLs and pool identities: "rendezvous" or
    /// "ketama".
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Rendezvous => "rendezvous",
            Distribution::Ketama => "ketama",
        }
    }
}

/// A pool's placement of keys: a [`Distribution`] computed once for a
/// list of servers (each backend builds one per store).
#[derive(Clone, Debug)]
pub struct Router(Placement);

#[derive(Clone, Debug)]
enum Placement {
    /// Each server's rendezvous seed ([`server_seed`]).
    Rendezvous(Vec<u64>),
    Ketama(Continuum),
}

impl Router {
    /// The placement of `distribution` over these servers.
    pub fn new(distribution: Distribution, servers: &[String]) -> Router {
        Router(match distribution {
            Distribution::Rendezvous => {
                Placement::Rendezvous(servers.iter().map(|s| server_seed(s)).collect())
            }
            Distribution::Ketama => Placement::Ketama(Continuum::new(servers)),
        })
    }

    /// The index of the server that owns `key`.
    pub fn server_for(&self, key: &[u8]) -> usize {
        match &self.0 {
            Placement::Rendezvous(seeds) => route_seeded(key, seeds),
            Placement::Ketama(continuum) => continuum.server_for(key),
        }
    }
}

/// The index of the server that owns `key` under rendezvous hashing
/// ([`Distribution::Rendezvous`], the default): the highest score
/// (`XXH3-64(key, seed = XXH3-64(server))`) wins, ties
/// go to the lower index. Adding or removing a server moves only the keys
/// that it gains or loses; the order of the list does not matter (except
/// for exact score ties, which are vanishingly rare, and duplicate
/// addresses, which should not be configured).
///
/// ```
/// use mcds_net::route;
///
/// let pool = ["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"];
/// let i = route(b"user:42", &pool);
/// assert!(i < 3);
/// // Same answer whatever the order of the list.
/// let reversed = ["127.0.0.1:11213", "127.0.0.1:11212", "127.0.0.1:11211"];
/// assert_eq!(pool[i], reversed[route(b"user:42", &reversed)]);
/// ```
pub fn route<S: AsRef<str>>(key: &[u8], servers: &[S]) -> usize {
    let seeds: Vec<u64> = servers.iter().map(|s| server_seed(s.as_ref())).collect();
    route_seeded(key, &seeds)
}

/// The seed of a server's scores: `XXH3-64(server)`.
fn server_seed(server: &str) -> u64 {
    mcds_core::stable_hash(server.as_bytes())
}

/// [`route`] with the servers' seeds computed once, as a store keeps them.
fn route_seeded(key: &[u8], seeds: &[u64]) -> usize {
    if seeds.len() == 1 {
        return 0;
    }
    let mut best = (0usize, 0u64);
    for (i, &seed) in seeds.iter().enumerate() {
        let s = xxh3_64_with_seed(key, seed);
        if i == 0 || s > best.1 {
            best = (i, s);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcds_core::stable_hash;

    #[test]
    fn hash_is_the_published_xxh3() {
        // Reference values of XXH3-64 with seed 0 (xxhash's test vectors).
        assert_eq!(stable_hash(b""), 0x2D06800538D394C2);
        assert_eq!(stable_hash(b"a"), 0xE6C632B61E964E1F);
    }

    #[test]
    fn placement_is_pinned() {
        // Changing the routing function silently would move every key in
        // every deployment: these values must never change.
        let pool = ["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"];
        let placed: Vec<usize> = (0..12)
            .map(|i| route(format!("key{i}").as_bytes(), &pool))
            .collect();
        assert_eq!(placed, PINNED);
    }

    // Cross-checked with Python's `xxhash` package:
    // xxh3_64_intdigest(key, seed=xxh3_64_intdigest(server)), highest wins.
    const PINNED: [usize; 12] = [0, 1, 0, 2, 1, 1, 1, 1, 2, 1, 2, 2];

    #[test]
    fn balanced_and_minimal_movement() {
        let four: Vec<String> = (0..4).map(|i| format!("10.0.0.1:{}", 11211 + i)).collect();
        let mut three = four.clone();
        three.remove(2);
        let mut counts = [0; 4];
        for i in 0..8000u32 {
            let key = format!("k{i}");
            let before = route(key.as_bytes(), &four);
            counts[before] += 1;
            let after = route(key.as_bytes(), &three);
            if before != 2 {
                assert_eq!(three[after], four[before], "{key} moved needlessly");
            }
        }
        for c in counts {
            assert!((1700..2300).contains(&c), "unbalanced {counts:?}");
        }
    }
}
