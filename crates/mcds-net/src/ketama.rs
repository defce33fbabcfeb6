//! Key placement compatible with libmemcached's MD5 ketama, the
//! distribution of php-memcached with `Memcached::OPT_LIBKETAMA_COMPATIBLE`
//! and of pylibmc with `behaviors={"ketama_weighted": True}` (both set
//! libmemcached's `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED`).
//!
//! What libmemcached does (`update_continuum` in `libmemcached/hosts.cc`,
//! `dispatch_host` in `libmemcached/hash.cc`), for servers of weight 1:
//!
//! * Each server gets `points_per_server(n)` points: 160 for most pool
//!   sizes, but libmemcached computes the count from the server's share of
//!   the total weight in single-precision floats, and for some sizes (25,
//!   47, 50, 55, … servers) that rounds down to 156.
//! * The points come 4 to an MD5 digest of the point name `host:port-i`
//!   (`i` from 0), or `host-i` when the port is memcached's default, 11211.
//!   `host` is the name as configured: no resolution, no brackets around an
//!   IPv6 address. Point `j` of a digest is its bytes `4j..4j+4` read as a
//!   little-endian `u32`.
//! * The points are sorted by value, equal values by server index.
//! * A key's hash is the first 4 bytes of `MD5(key)`, little-endian; it
//!   belongs to the first point at or after it, wrapping to the first
//!   point.

use md5::{Digest, Md5};

/// The port libmemcached leaves out of a server's point names.
const DEFAULT_PORT: u16 = 11211;

/// libmemcached's `MEMCACHED_POINTS_PER_SERVER_KETAMA`.
const POINTS_PER_SERVER: u32 = 160;

/// Points taken from one MD5 digest.
const POINTS_PER_DIGEST: u32 = 4;

/// The index of the server that owns `key` under libmemcached's ketama
/// (MD5, 160 points per server, or 156 for some pool sizes where
/// libmemcached's float arithmetic rounds down): the server php-memcached picks with
/// `Memcached::OPT_LIBKETAMA_COMPATIBLE` set to `true`, and pylibmc with
/// `behaviors={"ketama_weighted": True}`, for the same servers in the same
/// order, each of weight 1. Use it to share a pool's keys with PHP or
/// Python applications; a backend's `Builder::distribution` with
/// [`Distribution::Ketama`](crate::Distribution::Ketama) makes a store
/// place its keys this way.
///
/// Each server is named as the other clients name it: `host:port`, the host
/// exactly as they were given it (`localhost` and `127.0.0.1` place keys
/// differently), an IPv6 host in brackets (`[::1]:11212`). A server with no
/// port, or one that is not a number, is named as a whole, as libmemcached
/// names a server on the default port. The order of the list matters only
/// for two points of equal value (the first listed server wins), but it
/// should be the other clients' order.
///
/// Each call builds the continuum (40 MD5 digests per server); a store
/// builds it once. With no servers, 0 is returned, as [`route`](crate::route())
/// does.
///
/// ```
/// use mcds_net::ketama;
///
/// let pool = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"];
/// // What php-memcached's getServerByKey() answers for these servers, added
/// // in this order with OPT_LIBKETAMA_COMPATIBLE set to true.
/// assert_eq!(pool[ketama(b"user:1", &pool)], "10.0.0.2:11211");
/// assert_eq!(pool[ketama(b"user:2", &pool)], "10.0.0.3:11211");
/// ```
pub fn ketama<S: AsRef<str>>(key: &[u8], servers: &[S]) -> usize {
    Continuum::new(servers).server_for(key)
}

/// A pool's ketama continuum, built once: the sorted points
/// `(value, server index)` that [`ketama`] builds on every call. Keep one
/// for a fixed server list and ask it for each key.
///
/// ```
/// use mcds_net::{Continuum, ketama};
///
/// let pool = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"];
/// let continuum = Continuum::new(&pool);
/// assert_eq!(continuum.server_for(b"user:1"), ketama(b"user:1", &pool));
/// ```
#[derive(Clone, Debug)]
pub struct Continuum {
    points: Vec<(u32, u32)>,
    servers: usize,
}

impl Continuum {
    /// The continuum of these servers, each of weight 1.
    pub fn new<S: AsRef<str>>(servers: &[S]) -> Continuum {
        Continuum::with_points(servers, points_per_server(servers.len()))
    }

    /// The continuum with `points` points per server.
    fn with_points<S: AsRef<str>>(servers: &[S], points: u32) -> Continuum {
        let mut all = Vec::with_capacity(servers.len() * points as usize);
        for (index, server) in servers.iter().enumerate() {
            let index = u32::try_from(index).expect("fewer than 2^32 servers");
            let base = point_base(server.as_ref());
            for i in 0..points / POINTS_PER_DIGEST {
                let digest = Md5::digest(format!("{base}-{i}").as_bytes());
                for quarter in digest.chunks_exact(4) {
                    all.push((le_u32(quarter), index));
                }
            }
        }
        all.sort_unstable();
        Continuum {
            points: all,
            servers: servers.len(),
        }
    }

    /// The index of the server that owns `key`.
    pub fn server_for(&self, key: &[u8]) -> usize {
        if self.servers <= 1 {
            return 0; // no hash needed, as in libmemcached
        }
        let hash = le_u32(&Md5::digest(key)[..4]);
        let at = self.points.partition_point(|&(value, _)| value < hash);
        let (_, index) = self.points.get(at).unwrap_or(&self.points[0]);
        *index as usize
    }
}

/// Points per server for a pool of `servers` of weight 1, as libmemcached
/// computes them (in `float`): `floor(share * 160 / 4 * servers + 1e-10) * 4`
/// with `share = 1 / servers`. Not always 160: for 25 servers the share is
/// 0.039999999, the product 39.999996, and each server gets 156.
fn points_per_server(servers: usize) -> u32 {
    if servers == 0 {
        return 0;
    }
    let live = servers as f32;
    let share = 1.0f32 / live;
    let per_digest =
        (share * POINTS_PER_SERVER as f32 / POINTS_PER_DIGEST as f32 * live + 1e-10f32).floor();
    per_digest as u32 * POINTS_PER_DIGEST
}

/// The start of a server's point names: `host:port`, or `host` when the
/// port is 11211.
fn point_base(server: &str) -> String {
    match host_and_port(server) {
        (host, Some(port)) if port != DEFAULT_PORT => format!("{host}:{port}"),
        (host, _) => host.to_string(),
    }
}

/// `host:port` or `[host]:port` split, the brackets dropped; `[host]` is
/// the host alone; anything else (no port, a port that is not a number, a
/// bare IPv6 address) is taken whole, with no port.
fn host_and_port(server: &str) -> (&str, Option<u16>) {
    if let Some(rest) = server.strip_prefix('[') {
        if let Some((host, after)) = rest.split_once(']') {
            if after.is_empty() {
                return (host, None);
            }
            if let Some(port) = after.strip_prefix(':').and_then(|p| p.parse().ok()) {
                return (host, Some(port));
            }
        }
        return (server, None);
    }
    match server.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (server, None),
        },
        _ => (server, None),
    }
}

fn le_u32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(continuum: &Continuum, keys: std::ops::Range<u32>) -> Vec<usize> {
        keys.map(|i| continuum.server_for(format!("key{i}").as_bytes()))
            .collect()
    }

    // The pinned placements below are what php-memcached 3.2.0 on Debian
    // 12's libmemcached 1.1.4 answers: a `Memcached` with
    // `setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true)`, the servers
    // added in this order with `addServer(host, port)`, and for each key
    // the index in this list of `getServerByKey("key<i>")` (no server
    // needs to run for that). pylibmc with `{"ketama_weighted": True}` is
    // the same libmemcached code; tests/ketama_peers.rs checks both
    // clients against real servers.

    #[test]
    fn placement_is_pinned_to_libmemcached() {
        // 11211 is left out of its server's point names, 11212 and 11213
        // are not.
        let pool = ["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"];
        let three = Continuum::new(&pool);
        assert_eq!(placed(&three, 0..12), [2, 1, 2, 0, 0, 1, 0, 1, 0, 1, 1, 1]);
        assert_eq!(ketama(b"key0", &pool), 2);
        // IPv6: php-memcached's addServer("::1", 11211) and so on; the
        // brackets are not part of the host's name.
        let pool = ["[::1]:11211", "[::1]:11212", "[fe80::2]:11213"];
        assert_eq!(
            placed(&Continuum::new(&pool), 0..12),
            [1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 2]
        );
    }

    #[test]
    fn placement_is_pinned_for_25_servers_of_156_points() {
        let pool: Vec<String> = (1..=25).map(|i| format!("10.0.0.{i}:11211")).collect();
        let continuum = Continuum::new(&pool);
        assert_eq!(continuum.points.len(), 25 * 156);
        let pinned = [
            19, 4, 11, 2, 6, 11, 24, 10, 11, 14, 0, 18, 5, 6, 13, 7, 7, 11, 16, 7, 2, 8, 10, 21,
        ];
        assert_eq!(placed(&continuum, 0..24), pinned);
        // With 160 points some of these keys would be elsewhere.
        let naive = Continuum::with_points(&pool, 160);
        assert_ne!(placed(&naive, 0..24), pinned);
    }

    #[test]
    fn points_per_server_as_libmemcached_rounds() {
        assert_eq!(points_per_server(1), 160);
        assert_eq!(points_per_server(3), 160);
        assert_eq!(points_per_server(24), 160);
        // float rounding in libmemcached's update_continuum
        for n in [25, 47, 50, 55, 61, 71, 94, 100] {
            assert_eq!(points_per_server(n), 156, "{n} servers");
        }
    }

    #[test]
    fn point_names() {
        assert_eq!(point_base("127.0.0.1:11211"), "127.0.0.1");
        assert_eq!(point_base("127.0.0.1:11212"), "127.0.0.1:11212");
        assert_eq!(point_base("cache-a:011212"), "cache-a:11212");
        assert_eq!(point_base("[::1]:11212"), "::1:11212");
        assert_eq!(point_base("[::1]:11211"), "::1");
        assert_eq!(point_base("[::1]"), "::1");
        assert_eq!(point_base("::1"), "::1");
        assert_eq!(point_base("cache-a"), "cache-a");
        assert_eq!(point_base("cache-a:x"), "cache-a:x");
    }

    #[test]
    fn md5_is_the_published_one() {
        // RFC 1321, appendix A.5.
        assert_eq!(
            Md5::digest(b"abc")[..],
            [
                0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0, 0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1,
                0x7f, 0x72
            ]
        );
    }

    #[test]
    fn wraps_around_and_one_server_owns_all() {
        let one = Continuum::new(&["127.0.0.1:11211"]);
        assert_eq!(one.points.len(), 160);
        assert!((0..100).all(|i| one.server_for(format!("k{i}").as_bytes()) == 0));
        let three = Continuum::new(&["a:1", "b:2", "c:3"]);
        assert_eq!(three.points.len(), 480);
        assert!(three.points.windows(2).all(|w| w[0] <= w[1]));
        // A hash past the last point belongs to the first point's server.
        let last = three.points.last().unwrap().0;
        let key = (0u32..)
            .map(|i| format!("w{i}"))
            .find(|k| le_u32(&Md5::digest(k.as_bytes())[..4]) > last)
            .unwrap();
        assert_eq!(three.server_for(key.as_bytes()), three.points[0].1 as usize);
        assert_eq!(Continuum::new::<&str>(&[]).server_for(b"k"), 0);
    }
}
