//! The backend conformance suite: the same cases for every [`Store`].
//!
//! Each case is a function taking an [`Env`]; [`conformance_suite!`]
//! expands them into one `#[test]` each for a given store, so a test binary
//! per backend reports its own count. A backend agrees with memcached when it
//! passes every case.
//!
//! The cases are grouped by topic, one module each; a case's test is named
//! `<topic>::<case>` (`cargo test --test conformance_memory counters::`):
//!
//! | module | cases |
//! |---|---|
//! | [`kv`] | get, get_multi, set, add, replace, append, prepend, append_or_add, delete, flags |
//! | [`cas`] | cas, delete_cas, CAS ids changing on every write, the update helper |
//! | [`counters`] | incr, decr, incr_or_init: wrapping, flooring, padding, parsing |
//! | [`expiry`] | touch, TTLs of every op |
//! | [`limits`] | the item size limit on every write, bad keys |
//! | [`concurrency`] | threads racing on one key |
//! | [`pipeline`] | batches: every op, order on one key, per-op errors, large batches |
//!
//! A case is a `pub fn <case>(env: &Env)` in its topic's module, listed
//! under its topic in [`conformance_suite!`]. A unit test checks the list
//! against the modules' functions, so a case left off the list (which would
//! never run) fails mcds-testkit's own tests, and a listed case that does not
//! exist fails to compile.
//!
//! ## Cases a backend cannot pass by design
//!
//! A backend may lack a [`Capability`] on purpose: the text protocol behind
//! a proxy has no CAS ids it could tie to a server incarnation, so it
//! refuses every op that needs them. The cases that need each capability
//! are listed in one place, [`NEEDS`]; an [`Env`] names what its backend
//! lacks ([`Env::lacks`]). Such a case is not skipped: its test asserts that
//! the backend refuses loudly ([`Capability::assert_refused`]: for CAS,
//! `supports_cas` is false and `cas`, `delete_cas` and `update` are
//! [`Error::Unsupported`]), and that the case itself fails there (a case that
//! passes must come off the list). Each suite also has a test
//! `conformance_counts` that prints how many cases it runs and which are
//! unsupported by design (`cargo test -- --show-output`).
//!
//! [`conformance_suite!`]: crate::conformance_suite

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, ManualClock, MemoryStore, Store, Ttl};
use mcds_memcached::{Credentials, MemcachedStore, TlsOptions};
use mcds_text::TextStore;

use mcds_testserver::{
    MemcachedServer, NutcrackerProcess, NutcrackerServer, ServerOptions, ServerPool,
};

pub mod cas;
pub mod concurrency;
pub mod counters;
pub mod expiry;
pub mod kv;
pub mod limits;
pub mod pipeline;

/// Something a backend may lack by design (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// CAS ids tied to a server incarnation: `cas`, `delete_cas`, `update`,
    /// and the CAS ids that writes and reads return.
    Cas,
}

impl Capability {
    /// Assert that `env`'s backend refuses what it lacks, loudly: for
    /// [`Capability::Cas`], `supports_cas` is false and `cas`, `delete_cas`
    /// and `update` answer [`Error::Unsupported`] (and store nothing).
    pub fn assert_refused(self, env: &Env) {
        match self {
            Capability::Cas => {
                let key = k("refused");
                let s = env.s();
                assert!(!s.supports_cas(&key).unwrap(), "{}: supports_cas", env.name);
                let unsupported = |what: &str, r: mcds_core::Result<String>| match r {
                    Err(Error::Unsupported { .. }) => {}
                    other => panic!("{}: {what} must be Unsupported, got {other:?}", env.name),
                };
                unsupported(
                    "cas",
                    s.cas(&key, b"v", Ttl::Never, 1).map(|o| format!("{o:?}")),
                );
                unsupported(
                    "delete_cas",
                    s.delete_cas(&key, 1).map(|o| format!("{o:?}")),
                );
                unsupported(
                    "update",
                    s.update(&key, Ttl::Never, 3, &mut bump)
                        .map(|o| format!("{o:?}")),
                );
                assert_eq!(
                    s.get(&key).unwrap(),
                    None,
                    "{}: a refused op stored",
                    env.name
                );
            }
        }
    }
}

/// Every case that needs a [`Capability`]: on a backend that lacks it
/// ([`Env::lacks`]), the case is unsupported by design. The one list of
/// such cases.
pub const NEEDS: &[(&str, Capability)] = &[
    ("kv::writes_return_the_items_cas", Capability::Cas),
    ("cas::cas_match", Capability::Cas),
    ("cas::cas_mismatch", Capability::Cas),
    ("cas::cas_missing", Capability::Cas),
    ("cas::cas_changes_on_every_modification", Capability::Cas),
    ("cas::delete_cas_match", Capability::Cas),
    ("cas::delete_cas_mismatch", Capability::Cas),
    ("cas::delete_cas_missing", Capability::Cas),
    ("cas::update_helper", Capability::Cas),
    ("concurrency::update_concurrent", Capability::Cas),
    ("expiry::cas_sets_the_ttl", Capability::Cas),
    ("pipeline::pipeline_cas_ops", Capability::Cas),
];

/// Run the case `name` on `env`: as is, or, when `env` lacks what it
/// needs ([`NEEDS`]), assert that the backend refuses loudly and that the
/// case fails there.
pub fn run_case(env: &Env, name: &str, case: fn(&Env)) {
    let Some(&(_, capability)) = NEEDS
        .iter()
        .find(|(case, c)| *case == name && env.lacks.contains(c))
    else {
        case(env);
        return;
    };
    capability.assert_refused(env);
    let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(env))).is_ok();
    assert!(
        !passed,
        "{name} passes on {} although it needs {capability:?}, which the backend lacks: take it off conformance::NEEDS",
        env.name
    );
    println!(
        "{name}: unsupported by design on {} (needs {capability:?}); the backend refuses it with Error::Unsupported",
        env.name
    );
}

/// Print how many of the suite's `cases` run on `env`'s backend and which
/// are unsupported by design; check that [`NEEDS`] names only real cases.
pub fn print_counts(env: &Env, cases: &[&str]) {
    for (name, _) in NEEDS {
        assert!(
            cases.contains(name),
            "conformance::NEEDS names {name}, which is not a case"
        );
    }
    let unsupported: Vec<&str> = cases
        .iter()
        .copied()
        .filter(|c| {
            NEEDS
                .iter()
                .any(|(n, cap)| n == c && env.lacks.contains(cap))
        })
        .collect();
    println!(
        "conformance on {}: {} cases: {} must pass, {} unsupported by design (asserted Unsupported){}",
        env.name,
        cases.len(),
        cases.len() - unsupported.len(),
        unsupported.len(),
        if unsupported.is_empty() {
            String::new()
        } else {
            format!(": {}", unsupported.join(", "))
        }
    );
}

/// How [`Env::transport`] reaches its server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TLS with a client certificate.
    Tls,
    /// A unix-domain socket.
    Unix,
    /// ASCII authentication.
    Auth,
}

/// A store under test, plus how to let time pass for it.
pub struct Env {
    /// The store.
    pub store: Arc<dyn Store>,
    /// Which backend ("memory", "memcached", "pool3", "text", "nutcracker").
    pub name: &'static str,
    clock: Option<ManualClock>,
    /// Servers kept alive for the store.
    pub servers: Vec<MemcachedServer>,
    /// A proxy kept alive for the store (in front of `servers`).
    pub proxy: Option<NutcrackerProcess>,
    /// What the backend lacks by design (see [`NEEDS`]).
    pub lacks: Vec<Capability>,
}

impl Env {
    /// The embedded store with a manual clock.
    pub fn memory() -> Env {
        let clock = ManualClock::new(1_800_000_000_000);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build();
        Env {
            store: Arc::new(store),
            name: "memory",
            clock: Some(clock),
            servers: Vec::new(),
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// One fresh memcached server.
    pub fn memcached() -> Env {
        let server = MemcachedServer::start(ServerOptions::default());
        let store = MemcachedStore::connect(&server.addr()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "memcached",
            clock: None,
            servers: vec![server],
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// A pool of three fresh memcached servers.
    pub fn pool3() -> Env {
        let pool = ServerPool::start(3, ServerOptions::default());
        let store = MemcachedStore::connect(&pool.servers_arg()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "pool3",
            clock: None,
            servers: pool.servers,
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// One fresh memcached server over the text protocol (`mcds-text`,
    /// direct).
    pub fn text() -> Env {
        let server = MemcachedServer::start(ServerOptions::default());
        let store = TextStore::connect(&server.addr()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "text",
            clock: None,
            servers: vec![server],
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// A pool of three fresh memcached servers over the text protocol,
    /// routed by the client.
    pub fn text_pool3() -> Env {
        let pool = ServerPool::start(3, ServerOptions::default());
        let store = TextStore::connect(&pool.servers_arg()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "text-pool3",
            clock: None,
            servers: pool.servers,
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// The text protocol through twemproxy (`nutcracker`) in front of three
    /// fresh memcached servers: no CAS by design.
    pub fn nutcracker() -> Env {
        let proxy = NutcrackerServer::start(3, ServerOptions::default());
        let store = TextStore::builder()
            .behind_proxy(true)
            .connect([proxy.addr()])
            .expect("connect");
        let (process, servers) = proxy.into_parts();
        Env {
            store: Arc::new(store),
            name: "nutcracker",
            clock: None,
            servers,
            proxy: Some(process),
            lacks: vec![Capability::Cas],
        }
    }

    /// One fresh memcached server reached another way: over TLS (`-Z`,
    /// verified against the CA made for the test, with a client certificate
    /// the server requires), over a unix socket (`-s`), or with ASCII
    /// authentication (`-Y`); through the meta-protocol store, or with
    /// `text` through the text-protocol store. `name` names the path in
    /// the counts.
    pub fn transport(path: Transport, text: bool) -> Env {
        let options = match path {
            Transport::Tls => ServerOptions::default().tls_client_auth(),
            Transport::Unix => ServerOptions::default().unix_socket(),
            Transport::Auth => ServerOptions::default().auth("mcds", "s3cr:et%pass"),
        };
        let server = MemcachedServer::start(options);
        let tls = server.tls_files().map(|f| {
            TlsOptions::new()
                .ca_file(&f.ca)
                .client_cert(&f.client_cert, &f.client_key)
        });
        let credentials = matches!(path, Transport::Auth)
            .then(|| Credentials::new("mcds", "s3cr:et%pass").expect("credentials"));
        let store: Arc<dyn Store> = if text {
            let mut b = TextStore::builder();
            if let Some(tls) = tls {
                b = b.tls(tls);
            }
            if let Some(c) = credentials {
                b = b.credentials(c);
            }
            Arc::new(b.connect([server.addr()]).expect("connect"))
        } else {
            let mut b = MemcachedStore::builder();
            if let Some(tls) = tls {
                b = b.tls(tls);
            }
            if let Some(c) = credentials {
                b = b.credentials(c);
            }
            Arc::new(b.connect([server.addr()]).expect("connect"))
        };
        let name = match (path, text) {
            (Transport::Tls, false) => "meta over TLS",
            (Transport::Unix, false) => "meta over a unix socket",
            (Transport::Auth, false) => "meta with ASCII auth",
            (Transport::Tls, true) => "text over TLS",
            (Transport::Unix, true) => "text over a unix socket",
            (Transport::Auth, true) => "text with ASCII auth",
        };
        Env {
            store,
            name,
            clock: None,
            servers: vec![server],
            proxy: None,
            lacks: Vec::new(),
        }
    }

    /// Let `d` pass: advance the manual clock, or sleep for real servers.
    pub fn advance(&self, d: Duration) {
        match &self.clock {
            Some(clock) => clock.advance(d),
            None => std::thread::sleep(d),
        }
    }

    /// The store as a trait object.
    pub fn s(&self) -> &dyn Store {
        self.store.as_ref()
    }
}

fn k(name: &str) -> Key {
    Key::new(format!("conf:{name}")).expect("valid test key")
}

fn value(env: &Env, key: &Key) -> Option<Vec<u8>> {
    env.s().get(key).expect("get").map(|i| i.value)
}

fn assert_too_large<T: std::fmt::Debug>(r: mcds_core::Result<T>) {
    match r {
        Err(Error::ValueTooLarge { .. }) => {}
        other => panic!("expected ValueTooLarge, got {other:?}"),
    }
}

fn assert_non_numeric<T: std::fmt::Debug>(r: mcds_core::Result<T>) {
    match r {
        Err(Error::NonNumeric { .. }) => {}
        other => panic!("expected NonNumeric, got {other:?}"),
    }
}

/// An update function: the stored decimal number plus one (0 if missing).
fn bump(cur: Option<&[u8]>) -> Option<Vec<u8>> {
    let n: u64 = cur
        .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
        .unwrap_or(0);
    Some((n + 1).to_string().into_bytes())
}

/// Expands every conformance case into a `#[test]` for one store.
///
/// In a test file of its own (one per backend, so each reports its count):
///
/// ```text
/// mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::memory);
/// ```
///
/// `$env` is a function or closure returning a fresh [`Env`] for each case.
/// The tests are named `<topic>::<case>`.
#[macro_export]
macro_rules! conformance_suite {
    ($env:expr) => {
        $crate::conformance_suite!(@topics $env;
            kv: [
                get_miss, set_then_get, set_overwrites, empty_value, binary_value,
                unusual_keys, get_multi_mixed, get_multi_empty, get_multi_many,
                add_miss_stores, add_hit_not_stored, replace_miss, replace_hit,
                append_prepend_hit, append_prepend_miss, append_or_add, delete,
                flags_are_zero, backend_name, writes_return_the_items_cas,
            ],
            cas: [
                cas_match, cas_mismatch, cas_missing, cas_changes_on_every_modification,
                delete_cas_match, delete_cas_mismatch, delete_cas_missing, update_helper,
            ],
            counters: [
                incr_decr_hit, incr_decr_miss, incr_wraps, decr_floors, decr_pads_with_spaces,
                incr_parsing, incr_whitespace_value, incr_or_init_creates,
                incr_or_init_existing, incr_or_init_non_numeric,
            ],
            expiry: [touch, expiry, cas_sets_the_ttl],
            limits: [
                append_past_limit, item_size_limit, value_too_large_every_write,
                bad_keys_rejected,
            ],
            concurrency: [
                update_concurrent, incr_or_init_concurrent, append_or_add_concurrent,
                add_race_one_winner,
            ],
            pipeline: [
                pipeline_every_op, pipeline_cas_ops, pipeline_same_key_keeps_order,
                pipeline_errors_are_per_op, pipeline_large_batch,
            ],
        );
    };
    (@topics $env:expr; $($topic:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        /// A fresh store for one case.
        fn conformance_env() -> $crate::conformance::Env {
            ($env)()
        }
        /// How many cases run here, and which are unsupported by design.
        #[test]
        fn conformance_counts() {
            $crate::conformance::print_counts(
                &conformance_env(),
                &[$($(concat!(stringify!($topic), "::", stringify!($case)),)*)*],
            );
        }
        $(
            mod $topic {
                $(
                    #[test]
                    fn $case() {
                        let env = super::conformance_env();
                        $crate::conformance::run_case(
                            &env,
                            concat!(stringify!($topic), "::", stringify!($case)),
                            $crate::conformance::$topic::$case,
                        );
                    }
                )*
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Every `pub fn <case>` of a topic module is in the list that
    /// [`conformance_suite!`](crate::conformance_suite) expands, under its
    /// module, and the list names nothing else: a case left off the list
    /// would never run. Every file of `src/conformance/` is read, so a case
    /// in a new module is covered too.
    #[test]
    fn the_suite_runs_every_case() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/conformance");
        let mut defined = BTreeSet::new();
        let mut this_file = String::new();
        for entry in std::fs::read_dir(dir).expect("src/conformance") {
            let path = entry.expect("a directory entry").path();
            let Some(topic) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let source = std::fs::read_to_string(&path).expect("a source file");
            // mod.rs holds the harness (`run_case`, ...), not cases.
            for line in source.lines().filter(|_| topic != "mod") {
                if let Some(rest) = line.strip_prefix("pub fn ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    defined.insert(format!("{topic}::{name}"));
                }
            }
            if topic == "mod" {
                this_file = source;
            }
        }
        let list_start = this_file
            .find("$crate::conformance_suite!(@topics $env;")
            .expect("the case list");
        let list = &this_file[list_start..];
        let list = &list[list.find(';').unwrap() + 1..list.find(");").unwrap()];
        let mut listed = BTreeSet::new();
        for group in list.split(']') {
            let Some((topic, cases)) = group.split_once('[') else {
                continue;
            };
            let topic = topic.trim().trim_start_matches(',').trim();
            let topic = topic.strip_suffix(':').expect("`topic: [cases]`").trim();
            for case in cases.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                listed.insert(format!("{topic}::{case}"));
            }
        }
        assert!(defined.len() > 40, "found only {defined:?}");
        let missing: Vec<_> = defined.difference(&listed).collect();
        let unknown: Vec<_> = listed.difference(&defined).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "cases not in conformance_suite!: {missing:?}; listed but not defined: {unknown:?}"
        );
        for (name, _) in super::NEEDS {
            assert!(
                listed.contains(*name),
                "conformance::NEEDS names {name}, which is not a case"
            );
        }
    }
}
