//! `incr_or_init` on one key, N times, on one connection: for counting the
//! system calls an operation costs (`strace -c -f`), per transport.
//!
//! ```text
//! cargo build --release -p mcds-memcached --example incr_loop
//! strace -c -f target/release/examples/incr_loop memcached://127.0.0.1:11211 10000
//! ```
//!
//! The first argument is a server as the builder takes it (`host:port` or
//! `unix:/path`); `MCDS_TLS_CA=<ca.pem>` connects with TLS, verified
//! against that CA.

use mcds_core::{Key, Store, Ttl};
use mcds_memcached::{MemcachedStore, TlsOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let server = args.next().ok_or("usage: incr_loop SERVER [N]")?;
    let n: u64 = args.next().map_or(Ok(10_000), |a| a.parse())?;
    let mut builder = MemcachedStore::builder();
    if let Ok(ca) = std::env::var("MCDS_TLS_CA") {
        builder = builder.tls(TlsOptions::new().ca_file(ca));
    }
    let store = builder.connect([server])?;
    let key = Key::new("incr_loop")?;
    let mut last = 0;
    for _ in 0..n {
        last = store.incr_or_init(&key, 1, 1, Ttl::Never)?;
    }
    println!("{n} increments, last value {last}");
    Ok(())
}
