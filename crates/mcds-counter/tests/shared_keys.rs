//! Keys shared with an existing PHP application: a `Counter` bound to the
//! exact key `hits` that PHP code increments with php-memcached, both sides
//! at once on one real memcached, and nothing lost.
//!
//! Needs `php` with the `memcached` extension (Debian: php-cli,
//! php-memcached; `scripts/test.sh` installs them). Without them the test
//! fails and says what to install.

use std::process::Command;
use std::sync::Arc;

use mcds_core::{Key, Store};
use mcds_counter::Counter;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

const PHP: &str = r#"
$m = new Memcached();
$m->addServer('127.0.0.1', (int)$argv[1]);
$n = (int)$argv[2];
$lost = 0;
for ($i = 0; $i < $n; $i++) {
    // php-memcached's increment fails on a missing key (text protocol):
    // create it with add, as PHP code sharing a counter does.
    if ($m->increment('hits', 1) === false) {
        if (!$m->add('hits', 1) && $m->increment('hits', 1) === false) { $lost++; }
    }
}
echo "php done $n lost $lost\n";
"#;

fn php_available() -> Result<(), String> {
    let out = Command::new("php")
        .args(["-r", "echo class_exists('Memcached') ? 'yes' : 'no';"])
        .output()
        .map_err(|e| {
            format!("php is not installed ({e}): apt-get install php-cli php-memcached")
        })?;
    if String::from_utf8_lossy(&out.stdout) != "yes" {
        return Err("php has no memcached extension: apt-get install php-memcached".into());
    }
    Ok(())
}

#[test]
fn php_memcached_and_mcds_increment_one_counter_and_lose_nothing() {
    php_available().unwrap();
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hits = Counter::with_key(Arc::clone(&store), Key::new("hits").unwrap());
    let (php_n, rust_threads, rust_n) = (5_000u64, 2u64, 2_500u64);
    let port = server.addr().rsplit(':').next().unwrap().to_string();
    let php = Command::new("php")
        .args(["-r", PHP, "--", &port, &php_n.to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start php");
    std::thread::scope(|s| {
        for _ in 0..rust_threads {
            s.spawn(|| {
                for _ in 0..rust_n {
                    hits.incr(1).unwrap();
                }
            });
        }
    });
    let out = php.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "php failed: {said}");
    assert_eq!(said.trim(), format!("php done {php_n} lost 0"));
    let total = hits.get().unwrap();
    println!(
        "shared counter `hits`: php-memcached {php_n} + mcds {} increments = {total}",
        rust_threads * rust_n
    );
    assert_eq!(
        total,
        php_n + rust_threads * rust_n,
        "an increment was lost"
    );
    // And PHP reads what mcds counts: one value, one format.
    let read = Command::new("php")
        .args([
            "-r",
            "$m = new Memcached(); $m->addServer('127.0.0.1', (int)$argv[1]); echo $m->get('hits');",
            "--",
            &port,
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&read.stdout), total.to_string());
}
