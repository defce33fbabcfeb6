//! `Distribution::Ketama` against the clients it is meant to share a pool
//! with, on three real memcached servers: php-memcached with
//! `Memcached::OPT_LIBKETAMA_COMPATIBLE` (Debian's `php-memcached`) and
//! pylibmc with `behaviors={"ketama_weighted": True}` (Debian's
//! `python3-pylibmc`), both over the text protocol, run as subprocesses.
//! Neither package installed is a failure, not a skip: scripts/test.sh
//! installs them.

use std::process::Command;

use mcds_core::{Key, Store, Ttl};
use mcds_memcached::{Distribution, MemcachedStore, ketama};
use mcds_testserver::{ServerOptions, ServerPool};

const KEYS: usize = 1000;

/// Debian's python3, where python3-pylibmc installs (not a pyenv one that
/// may come first on PATH).
const PYTHON: &str = "/usr/bin/python3";

/// Run `program args…`, return its stdout; panic with its stderr if it
/// fails.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `program args…` runs and exits 0.
fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn require_peers() {
    assert!(
        succeeds("php", &["-r", "exit(class_exists('Memcached') ? 0 : 1);"]),
        "php-memcached is not installed (PHP's Memcached class is missing): \
         apt-get install php-memcached (scripts/test.sh installs it)"
    );
    assert!(
        succeeds(PYTHON, &["-c", "import pylibmc"]),
        "pylibmc is not installed for {PYTHON}: apt-get install python3-pylibmc \
         (scripts/test.sh installs it)"
    );
}

/// The PHP client of the test: a `Memcached` with libmemcached's ketama,
/// text protocol, the servers (`$argv[2..]`) added in order; `$argv[1]` is
/// `write` (set `php:<i>` = `php-value-<i>`) or `read` (count the
/// `mcds:<i>` = `mcds-value-<i>` it finds).
const PHP: &str = r#"
$m = new Memcached();
$m->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true);
$m->setOption(Memcached::OPT_BINARY_PROTOCOL, false);
foreach (array_slice($argv, 3) as $server) {
    [$host, $port] = explode(':', $server);
    $m->addServer($host, (int) $port);
}
$n = (int) $argv[2];
if ($argv[1] === 'write') {
    for ($i = 0; $i < $n; $i++) {
        if (!$m->set("php:$i", "php-value-$i")) {
            fwrite(STDERR, "set php:$i: " . $m->getResultMessage() . "\n");
            exit(1);
        }
    }
    echo $n, "\n";
} else {
    $found = 0;
    for ($i = 0; $i < $n; $i++) {
        if ($m->get("mcds:$i") === "mcds-value-$i") {
            $found++;
        }
    }
    echo $found, "\n";
}
"#;

/// The Python client: pylibmc with the behaviors in `argv[1]` (JSON), text
/// protocol, counting the `mcds:<i>` = `mcds-value-<i>` it finds.
const PYLIBMC: &str = r#"
import json, sys, pylibmc
behaviors = json.loads(sys.argv[1])
n = int(sys.argv[2])
c = pylibmc.Client(sys.argv[3:], binary=False, behaviors=behaviors)
print(sum(1 for i in range(n) if c.get("mcds:%d" % i) == b"mcds-value-%d" % i))
"#;

fn php(action: &str, servers: &[String]) -> usize {
    let n = KEYS.to_string();
    let mut args = vec!["-r", PHP, "--", action, &n];
    args.extend(servers.iter().map(String::as_str));
    run("php", &args)
        .trim()
        .parse()
        .expect("php printed a count")
}

fn pylibmc(behaviors: &str, servers: &[String]) -> usize {
    let n = KEYS.to_string();
    let mut args = vec!["-c", PYLIBMC, behaviors, &n];
    args.extend(servers.iter().map(String::as_str));
    run(PYTHON, &args)
        .trim()
        .parse()
        .expect("python printed a count")
}

fn keys(prefix: &str) -> Vec<Key> {
    (0..KEYS)
        .map(|i| Key::new(format!("{prefix}:{i}")).unwrap())
        .collect()
}

/// For each key, the servers (indexes) that hold it with `value(i)`, read
/// from each server alone.
fn holders(servers: &[String], keys: &[Key], value: impl Fn(usize) -> String) -> Vec<Vec<usize>> {
    let mut held = vec![Vec::new(); keys.len()];
    for (s, addr) in servers.iter().enumerate() {
        // A store of one server of the pool, to look: a pool of its own.
        let alone = MemcachedStore::builder()
            .pool_name("look")
            .connect([addr])
            .unwrap();
        for (i, item) in alone.get_multi(keys).unwrap().into_iter().enumerate() {
            if let Some(item) = item {
                assert_eq!(item.value, value(i).as_bytes(), "{} on {addr}", keys[i]);
                held[i].push(s);
            }
        }
    }
    held
}

#[test]
fn ketama_shares_keys_with_php_memcached_and_pylibmc() {
    require_peers();
    let pool = ServerPool::start(3, ServerOptions::default());
    let servers = pool.addrs();
    let store = MemcachedStore::builder()
        .distribution(Distribution::Ketama)
        .connect(&servers)
        .unwrap();

    // php-memcached writes; mcds finds every key on the server php chose.
    assert_eq!(php("write", &servers), KEYS);
    let php_keys = keys("php");
    let held = holders(&servers, &php_keys, |i| format!("php-value-{i}"));
    let mut per_server = vec![0; servers.len()];
    let mut same_server = 0;
    for (key, on) in php_keys.iter().zip(&held) {
        let mine = store.server_for(key);
        assert_eq!(mine, ketama(key.as_bytes(), &servers));
        if on[..] == [mine] {
            same_server += 1;
            per_server[mine] += 1;
        }
    }
    let read = store.get_multi(&php_keys).unwrap();
    let read = (0..KEYS)
        .filter(|&i| {
            read[i]
                .as_ref()
                .is_some_and(|item| item.value == format!("php-value-{i}").as_bytes())
        })
        .count();

    // mcds writes; pylibmc and php-memcached read every key back.
    let mcds_keys = keys("mcds");
    for (i, key) in mcds_keys.iter().enumerate() {
        let value = format!("mcds-value-{i}");
        store.set(key, value.as_bytes(), Ttl::secs(600)).unwrap();
    }
    let mcds_held = holders(&servers, &mcds_keys, |i| format!("mcds-value-{i}"));
    assert!(
        mcds_keys
            .iter()
            .zip(&mcds_held)
            .all(|(k, on)| on[..] == [store.server_for(k)])
    );
    let by_pylibmc = pylibmc(r#"{"ketama_weighted": true}"#, &servers);
    let by_php = php("read", &servers);
    // For the record: pylibmc's "ketama" alone is libmemcached's other,
    // non-MD5 continuum (100 points per server, one-at-a-time hash).
    let by_plain_ketama = pylibmc(r#"{"ketama": true}"#, &servers);

    println!(
        "ketama: {same_server}/{KEYS} php-memcached keys found on the same server \
         (per server {per_server:?}), mcds read {read}/{KEYS}; \
         pylibmc read {by_pylibmc}/{KEYS}, php-memcached read {by_php}/{KEYS} of mcds's keys \
         (pylibmc with {{\"ketama\": True}} alone: {by_plain_ketama}/{KEYS})"
    );
    assert_eq!(
        same_server, KEYS,
        "php-memcached keys mcds places elsewhere"
    );
    assert!(
        per_server.iter().all(|&n| n > KEYS / 6),
        "unbalanced: {per_server:?}"
    );
    assert_eq!(read, KEYS);
    assert_eq!(
        by_pylibmc, KEYS,
        "pylibmc (ketama_weighted) missed mcds keys"
    );
    assert_eq!(by_php, KEYS, "php-memcached missed mcds keys");
}
