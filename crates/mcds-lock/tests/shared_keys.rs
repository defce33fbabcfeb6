//! A lock shared with an existing PHP application that locks by adding a
//! key with php-memcached (as Symfony Lock's MemcachedStore does): each
//! side is refused while the other holds the key, on one real memcached.
//!
//! Needs `php` with the `memcached` extension (Debian: php-cli,
//! php-memcached; `scripts/test.sh` installs them).

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Key, Store};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// Run PHP code with `$m` connected to the server; its stdout.
fn php(port: &str, code: &str) -> String {
    let script = format!("$m = new Memcached(); $m->addServer('127.0.0.1', {port}); {code}");
    let out = Command::new("php")
        .args(["-r", &script])
        .output()
        .expect("php is not installed: apt-get install php-cli php-memcached");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("Memcached"),
        "php failed (is php-memcached installed? apt-get install php-memcached): {stderr}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn an_add_based_php_lock_and_an_mcds_lock_on_one_key_exclude_each_other() {
    let server = MemcachedServer::start_default();
    let port = server.addr().rsplit(':').next().unwrap().to_string();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::with_key(
        store,
        Key::new("report-lock").unwrap(),
        Duration::from_secs(30),
    )
    .unwrap();

    // mcds holds it: PHP's add is refused, and PHP sees mcds's token.
    let guard = lock.try_acquire().unwrap().expect("free at first");
    let token = guard.owner_token().to_string();
    let said = php(
        &port,
        "var_export($m->add('report-lock', 'php-token', 30)); echo ' ', $m->get('report-lock');",
    );
    assert_eq!(said, format!("false {token}"));
    assert_eq!(
        guard.release().unwrap(),
        Release::Released,
        "still ours: PHP did not touch it"
    );

    // PHP holds it: mcds is refused, and reports PHP as the holder.
    assert_eq!(
        php(
            &port,
            "var_export($m->add('report-lock', 'php-token', 30));"
        ),
        "true"
    );
    assert!(lock.try_acquire().unwrap().is_none(), "taken by PHP");
    assert_eq!(lock.holder().unwrap().as_deref(), Some("php-token"));
    assert_eq!(php(&port, "var_export($m->delete('report-lock'));"), "true");
    assert!(
        lock.try_acquire().unwrap().is_some(),
        "free once PHP deleted it"
    );
}
