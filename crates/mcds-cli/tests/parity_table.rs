//! The parity table: every public method of every mcds structure, and
//! where C, Python, PHP and the `mcds` command reach it.
//!
//! Nothing in the table is typed by hand but the exceptions to the naming
//! conventions ([`ALIASES`]): the methods are read from the structure
//! crates' sources, and each surface is read from what it really is —
//! `include/mcds.h` for C, the classes of `bindings/python/src/mcds` for
//! Python, `bindings/php/mcds.stub.php` (which a PHP test holds to the
//! extension) for PHP, and the man pages `mcds man --dir` writes for the
//! CLI. The guide (docs/src/parity.md) carries the table between its `parity` markers; this
//! test fails when that copy is stale (`MCDS_BLESS=1` rewrites it) and when
//! an alias names something that does not exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A structure: its Rust type and source, and its name on each surface.
struct Structure {
    rust: &'static str,
    src: &'static str,
    /// The C handle: functions are `mcds_<c>_<method>`.
    c: &'static str,
    python: &'static str,
    php: &'static str,
    /// The `mcds` command, if there is one.
    cli: Option<&'static str>,
}

const STRUCTURES: &[Structure] = &[
    s(
        "Counter",
        "mcds-counter/src/counter.rs",
        "counter",
        "Counter",
        Some("counter"),
    ),
    s(
        "ViewCounter",
        "mcds-counter/src/view.rs",
        "view_counter",
        "ViewCounter",
        Some("view"),
    ),
    s(
        "ShadowCounter",
        "mcds-counter/src/shadow.rs",
        "shadow_counter",
        "ShadowCounter",
        Some("shadow"),
    ),
    s(
        "WindowCounter",
        "mcds-counter/src/window.rs",
        "window",
        "WindowCounter",
        Some("window"),
    ),
    s(
        "RateLimiter",
        "mcds-counter/src/rate.rs",
        "limiter",
        "RateLimiter",
        Some("limit"),
    ),
    s("Lock", "mcds-lock/src/lib.rs", "lock", "Lock", Some("lock")),
    // C, Python and PHP fold the guard into the lock object.
    s(
        "Guard",
        "mcds-lock/src/lib.rs",
        "lock",
        "Lock",
        Some("lock"),
    ),
    // A quorum of servers for locks: every surface opens it from a store
    // URL (`memcached://a,b,c?quorum`; the CLI's --servers too).
    s(
        "QuorumStore",
        "mcds-core/src/quorum.rs",
        "store",
        "Store",
        Some("lock"),
    ),
    s("Set", "mcds-set/src/set.rs", "set", "Set", Some("set")),
    s(
        "ShardedSet",
        "mcds-set/src/sharded.rs",
        "sharded_set",
        "ShardedSet",
        Some("sharded-set"),
    ),
    s(
        "IntArray",
        "mcds-set/src/intarray.rs",
        "int_array",
        "IntArray",
        None,
    ),
    s(
        "Table",
        "mcds-set/src/table.rs",
        "table",
        "Table",
        Some("table"),
    ),
    s(
        "EventLog",
        "mcds-eventlog/src/lib.rs",
        "log",
        "EventLog",
        Some("log"),
    ),
    s(
        "BloomFilter",
        "mcds-sketch/src/bloom.rs",
        "bloom",
        "BloomFilter",
        Some("bloom"),
    ),
    s(
        "HyperLogLog",
        "mcds-sketch/src/hll.rs",
        "hll",
        "HyperLogLog",
        Some("hll"),
    ),
    s(
        "HllBuffer",
        "mcds-sketch/src/hll.rs",
        "hll_buffer",
        "HllBuffer",
        None,
    ),
    s(
        "ActivityBitmap",
        "mcds-sketch/src/bitmap.rs",
        "bitmap",
        "ActivityBitmap",
        Some("bitmap"),
    ),
    // Issue 19's structures.
    s(
        "CounterMap",
        "mcds-counter/src/map.rs",
        "counter_map",
        "CounterMap",
        Some("map"),
    ),
    s(
        "Leaderboard",
        "mcds-sketch/src/topk.rs",
        "leaderboard",
        "Leaderboard",
        Some("leaderboard"),
    ),
    s(
        "ScalableBloomFilter",
        "mcds-sketch/src/scalable.rs",
        "scalable_bloom",
        "ScalableBloomFilter",
        Some("sbloom"),
    ),
    s(
        "TimeSeries",
        "mcds-timeseries/src/series.rs",
        "timeseries",
        "TimeSeries",
        Some("series"),
    ),
    s(
        "PackedSeries",
        "mcds-timeseries/src/packed.rs",
        "packed_series",
        "PackedSeries",
        Some("packed"),
    ),
];

const fn s(
    rust: &'static str,
    src: &'static str,
    c: &'static str,
    class: &'static str,
    cli: Option<&'static str>,
) -> Structure {
    Structure {
        rust,
        src,
        c,
        python: class,
        php: class,
        cli,
    }
}

/// Where a surface names a method otherwise than by convention
/// (`mcds_<c>_<method>`, `Class.method`, `Class::camelMethod`,
/// `mcds <cli> <method>`): (type, method, surface, name). A CLI name may
/// end in an option (`lock run --fencing`), which its man page must list.
const ALIASES: &[(&str, &str, Surface, &str)] = &[
    (
        "Counter",
        "with_key",
        Surface::C,
        "mcds_counter_new_with_key",
    ),
    ("Counter", "with_key", Surface::Cli, "counter incr --key"),
    ("Counter", "incr_many", Surface::Cli, "counter incr"),
    ("ViewCounter", "view", Surface::Cli, "view incr"),
    (
        "ViewCounter",
        "view_by",
        Surface::C,
        "mcds_view_counter_view",
    ),
    ("ViewCounter", "view_by", Surface::Cli, "view incr"),
    ("ShadowCounter", "value", Surface::Cli, "shadow get"),
    ("WindowCounter", "value", Surface::Cli, "window get"),
    ("Lock", "with_key", Surface::C, "mcds_lock_new_with_key"),
    ("Lock", "with_key", Surface::Cli, "lock run --key"),
    ("Lock", "try_acquire", Surface::Php, "acquire"),
    ("Lock", "try_acquire", Surface::Cli, "lock run --nonblock"),
    ("Lock", "acquire", Surface::Php, "acquireWithin"),
    ("Lock", "acquire", Surface::Cli, "lock run --wait"),
    ("Lock", "with_lock", Surface::Php, "synchronized"),
    ("Lock", "with_lock", Surface::Cli, "lock run"),
    ("Lock", "with_fencing", Surface::Cli, "lock run --fencing"),
    ("Lock", "holder", Surface::Php, "getHolder"),
    ("Lock", "holder", Surface::Cli, "lock status"),
    ("Guard", "fencing_token", Surface::Php, "getFencingToken"),
    ("Guard", "owner_token", Surface::Php, "getOwnerToken"),
    ("Lock", "name", Surface::Php, "getName"),
    ("Lock", "ttl", Surface::Php, "getTtl"),
    ("Guard", "extend", Surface::Php, "refresh"),
    ("Guard", "fencing_token", Surface::Cli, "lock run --fencing"),
    ("Guard", "auto_extend", Surface::Cli, "lock run --ttl"),
    ("Guard", "auto_extend_with", Surface::Cli, "lock run --ttl"),
    ("QuorumStore", "new", Surface::C, "mcds_store_new_url"),
    ("QuorumStore", "new", Surface::Python, "from_url"),
    ("QuorumStore", "new", Surface::Php, "fromUrl"),
    ("QuorumStore", "new", Surface::Cli, "lock run --servers"),
    ("Set", "add", Surface::C, "mcds_set_add_many"),
    ("Set", "remove", Surface::C, "mcds_set_remove_many"),
    ("Set", "members_utf8", Surface::Cli, "set members"),
    ("ShardedSet", "add", Surface::C, "mcds_sharded_set_add_many"),
    (
        "ShardedSet",
        "remove",
        Surface::C,
        "mcds_sharded_set_remove_many",
    ),
    ("EventLog", "put_at", Surface::Cli, "log put --at-ms"),
    ("EventLog", "fetch_iter", Surface::Cli, "log fetch"),
    ("BloomFilter", "contains", Surface::Cli, "bloom check"),
    ("HyperLogLog", "count_union", Surface::Cli, "hll count"),
    ("HyperLogLog", "add_many", Surface::Cli, "hll add"),
    ("ActivityBitmap", "set", Surface::Cli, "bitmap mark --index"),
    ("ActivityBitmap", "count_bits", Surface::Cli, "bitmap count"),
    ("ActivityBitmap", "mark_now", Surface::Cli, "bitmap mark"),
    ("CounterMap", "with_scale", Surface::Cli, "map incr --scale"),
    (
        "CounterMap",
        "incr_decimal",
        Surface::Cli,
        "map incr --scale",
    ),
    ("CounterMap", "incr_f64", Surface::Cli, "map incr --round"),
    ("CounterMap", "get_decimal", Surface::Cli, "map get --scale"),
    (
        "CounterMap",
        "get_all_decimal",
        Surface::Cli,
        "map get-all --scale",
    ),
    ("CounterMap", "is_empty", Surface::Cli, "map len"),
    ("CounterMap", "get_all_iter", Surface::Cli, "map get-all"),
    ("CounterMap", "fields_iter", Surface::Cli, "map fields"),
    ("TimeSeries", "range_iter", Surface::Cli, "series range"),
    (
        "Leaderboard",
        "with_ttl",
        Surface::Cli,
        "leaderboard incr --ttl",
    ),
    ("Leaderboard", "incr_many", Surface::Cli, "leaderboard incr"),
    (
        "Leaderboard",
        "capacity",
        Surface::Cli,
        "leaderboard summary",
    ),
    (
        "ScalableBloomFilter",
        "with_growth",
        Surface::Cli,
        "sbloom add --growth",
    ),
    (
        "ScalableBloomFilter",
        "add_many",
        Surface::Cli,
        "sbloom add",
    ),
    (
        "ScalableBloomFilter",
        "contains",
        Surface::Cli,
        "sbloom check",
    ),
    (
        "ScalableBloomFilter",
        "contains_many",
        Surface::Cli,
        "sbloom check",
    ),
    (
        "TimeSeries",
        "record",
        Surface::Cli,
        "series record --at-ms",
    ),
    ("TimeSeries", "record_now", Surface::Cli, "series record"),
    ("PackedSeries", "incr", Surface::Cli, "packed incr --at-ms"),
    ("PackedSeries", "incr_now", Surface::Cli, "packed incr"),
    (
        "TimeSeries",
        "with_loss_check",
        Surface::Cli,
        "series aggregate --no-loss-check",
    ),
    (
        "TimeSeries",
        "with_max_clock_skew",
        Surface::Cli,
        "series record --max-clock-skew",
    ),
    (
        "PackedSeries",
        "with_loss_check",
        Surface::Cli,
        "packed sum --no-loss-check",
    ),
    (
        "PackedSeries",
        "with_max_clock_skew",
        Surface::Cli,
        "packed incr --max-clock-skew",
    ),
    // Python: `with lock:` is `Lock.__enter__`/`__exit__`; properties where
    // Rust has getters; `len(s)`; one `view(delta)` for both calls.
    ("WindowCounter", "value", Surface::Python, "get"),
    ("ViewCounter", "view_by", Surface::Python, "view"),
    ("Lock", "with_lock", Surface::Python, "__enter__"),
    ("Guard", "is_lost", Surface::Python, "lost"),
    ("Set", "len", Surface::Python, "__len__"),
    ("ShardedSet", "len", Surface::Python, "__len__"),
];

/// The methods of issue 19's structures that no `mcds` command reaches,
/// and why: (type, method, reason). The test
/// `issue_19_cli_gaps_have_reasons` holds this list to the table.
const CLI_GAPS: &[(&str, &str, &str)] = &[
    (
        "CounterMap",
        "name",
        "a getter of what the command line names",
    ),
    ("CounterMap", "scale", "a getter of --scale"),
    (
        "CounterMap",
        "with_bucket_bytes",
        "a registry bucket size every client of a map must share; the command line keeps the default (4 KiB)",
    ),
    (
        "CounterMap",
        "registry_key",
        "a key for programs; the guide gives the key layout",
    ),
    (
        "CounterMap",
        "field_key",
        "a key for programs; the guide gives the key layout",
    ),
    (
        "Leaderboard",
        "key",
        "a key for programs; the guide gives the key layout",
    ),
    (
        "ScalableBloomFilter",
        "header_key",
        "a key for programs; the guide gives the key layout",
    ),
    (
        "TimeSeries",
        "name",
        "a getter of what the command line names",
    ),
    ("TimeSeries", "resolutions", "a getter of --resolution"),
];

/// The structures of issue 19, whose CLI gaps [`CLI_GAPS`] explains.
const ISSUE_19: &[&str] = &[
    "CounterMap",
    "Leaderboard",
    "ScalableBloomFilter",
    "TimeSeries",
    "PackedSeries",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Surface {
    C,
    Python,
    Php,
    Cli,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The `pub fn`s of `impl <ty> {` blocks in `src` (inherent impls only),
/// but for the async twins (`pub async fn` and `*_async*`); an
/// `async fn x_io` under `#[blocking_and_async(pub)]` is the method `x`.
fn rust_methods(src: &str, ty: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut pair = false;
    for line in src.lines() {
        if inside && line.trim() == "#[blocking_and_async(pub)]" {
            pair = true;
            continue;
        }
        let unscoped = line.trim().trim_start_matches("pub(crate) ");
        if pair && let Some(rest) = unscoped.strip_prefix("async fn ") {
            pair = false;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if let Some(base) = name.strip_suffix("_io") {
                out.push(base.to_string());
            }
            continue;
        }
        if line.starts_with("impl ") {
            let head = line.trim_end_matches('{').trim();
            inside = !head.contains(" for ")
                && head
                    .rsplit(' ')
                    .next()
                    .is_some_and(|t| t == ty || t.starts_with(&format!("{ty}<")));
        } else if line.starts_with('}') {
            inside = false;
        } else if inside && let Some(rest) = line.strip_prefix("    pub fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // An async twin (`incr_async`, `auto_extend_async_with`) is the
            // same operation as its blocking method, which is what the other
            // languages reach.
            if !name.ends_with("_async") && !name.contains("_async_") {
                out.push(name);
            }
        }
    }
    out
}

/// Every C function of the header.
fn c_functions() -> BTreeSet<String> {
    read(&repo().join("include/mcds.h"))
        .lines()
        .filter(|l| {
            !l.starts_with(' ') && !l.starts_with('*') && l.contains("mcds_") && l.contains('(')
        })
        .filter_map(|l| {
            let before = &l[..l.find('(')?];
            Some(before.rsplit([' ', '*']).next()?.to_string())
        })
        .collect()
}

/// `class -> methods` of the Python package (public names, properties and
/// dunder protocols such as `__contains__` included).
fn python_methods() -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let dir = repo().join("bindings/python/src/mcds");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries.flatten() {
        if entry.path().extension().is_none_or(|e| e != "py") {
            continue;
        }
        let mut class = None;
        for line in read(&entry.path()).lines() {
            if let Some(rest) = line.strip_prefix("class ") {
                class = Some(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>(),
                );
            } else if !line.starts_with(' ')
                && !line.is_empty()
                && !line.starts_with('#')
                && !line.starts_with('@')
            {
                class = None;
            } else if let (Some(class), Some(rest)) = (&class, line.strip_prefix("    def ")) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.entry(class.clone()).or_default().insert(name);
            }
        }
    }
    out
}

/// `class -> methods` of the PHP extension's stub.
fn php_methods() -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let path = repo().join("bindings/php/mcds.stub.php");
    if !path.exists() {
        return out;
    }
    let mut class = None;
    for line in read(&path).lines() {
        let t = line.trim();
        if let Some(rest) = t
            .strip_prefix("final class ")
            .or_else(|| t.strip_prefix("class "))
        {
            class = Some(
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        } else if let (Some(class), Some(i)) = (&class, t.find("function ")) {
            let name: String = t[i + 9..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.entry(class.clone()).or_default().insert(name);
        }
    }
    out
}

/// `command path -> man page text` of the CLI, from `mcds man --dir`; the
/// path as the page names it, words joined by hyphens.
fn cli_pages() -> BTreeMap<String, String> {
    // One directory per call: the tests of this file run at once.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcds-parity-man-{}-{call}", std::process::id()));
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .args(["man", "--dir"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(cmd) = name
            .strip_prefix("mcds-")
            .and_then(|n| n.strip_suffix(".1"))
        {
            // Keyed by the hyphenated path ("lock-run", "sharded-set-add"):
            // a command's own name may hold a hyphen.
            out.insert(cmd.to_string(), read(&entry.path()));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn camel(method: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in method.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The surfaces, read once.
struct Surfaces {
    c: BTreeSet<String>,
    python: BTreeMap<String, BTreeSet<String>>,
    php: BTreeMap<String, BTreeSet<String>>,
    cli: BTreeMap<String, String>,
}

impl Surfaces {
    /// Whether `name` exists on `surface` for structure `st`.
    fn has(&self, st: &Structure, surface: Surface, name: &str) -> bool {
        match surface {
            Surface::C => self.c.contains(name),
            Surface::Python => self.python.get(st.python).is_some_and(|m| m.contains(name)),
            Surface::Php => self.php.get(st.php).is_some_and(|m| m.contains(name)),
            Surface::Cli => {
                // "lock run --fencing": the page of the longest command
                // prefix, which must list the option.
                let (cmd, option) = match name.split_once(" --") {
                    Some((cmd, opt)) => (cmd, Some(format!("\\-\\-{}", opt.replace('-', "\\-")))),
                    None => (name, None),
                };
                self.cli
                    .get(&cmd.replace(' ', "-"))
                    .is_some_and(|page| option.is_none_or(|o| page.contains(&o)))
            }
        }
    }

    /// How `surface` reaches `st::method`, if it does, as a cell.
    fn cell(&self, st: &Structure, method: &str, surface: Surface) -> String {
        let alias = ALIASES
            .iter()
            .find(|(t, m, s, _)| *t == st.rust && *m == method && *s == surface)
            .map(|a| a.3.to_string());
        // A constructor by convention, unless an alias names another way
        // in (a quorum comes from a store URL).
        if method == "new" && alias.is_none() {
            let exists = match surface {
                Surface::C => self.c.contains(&format!("mcds_{}_new", st.c)),
                Surface::Python => self.python.contains_key(st.python),
                Surface::Php => self.php.contains_key(st.php),
                Surface::Cli => st.cli.is_some_and(|c| self.cli.contains_key(c)),
            };
            let shown = match surface {
                Surface::C => format!("`mcds_{}_new`", st.c),
                Surface::Python => format!("`{}(…)`", st.python),
                Surface::Php => format!("`new {}`", st.php),
                Surface::Cli => format!("`{} …`", st.cli.unwrap_or_default()),
            };
            return if exists { shown } else { "—".into() };
        }
        let conventional = match surface {
            Surface::C => format!("mcds_{}_{method}", st.c),
            Surface::Python => method.to_string(),
            Surface::Php => camel(method),
            Surface::Cli => match st.cli {
                Some(cli) => format!("{cli} {}", method.replace('_', "-")),
                None => return "—".into(),
            },
        };
        let name = match alias {
            Some(alias) => {
                assert!(
                    self.has(st, surface, &alias),
                    "the alias {}::{method} → {surface:?} {alias:?} names nothing: fix ALIASES",
                    st.rust
                );
                alias
            }
            None if self.has(st, surface, &conventional) => conventional,
            None => return "—".into(),
        };
        match surface {
            Surface::C => format!("`{name}`"),
            Surface::Python if name == "__enter__" => format!("`with {}`", st.python),
            Surface::Python if name == "__len__" => format!("`len({})`", st.python),
            Surface::Python => format!("`{}.{name}`", st.python),
            Surface::Php => format!("`{}::{name}`", st.php),
            Surface::Cli => format!("`mcds {name}`"),
        }
    }
}

fn surfaces() -> Surfaces {
    Surfaces {
        c: c_functions(),
        python: python_methods(),
        php: php_methods(),
        cli: cli_pages(),
    }
}

fn table() -> String {
    let surfaces = surfaces();
    let crates = repo().join("crates");
    let mut rows = String::from(
        "| structure | Rust method | C | Python | PHP | CLI |\n|---|---|---|---|---|---|\n",
    );
    let mut totals = [0usize; 5];
    for st in STRUCTURES {
        let methods = rust_methods(&read(&crates.join(st.src)), st.rust);
        assert!(
            !methods.is_empty(),
            "no methods of {} in {}",
            st.rust,
            st.src
        );
        for method in methods {
            let cells: Vec<String> = [Surface::C, Surface::Python, Surface::Php, Surface::Cli]
                .iter()
                .map(|s| surfaces.cell(st, &method, *s))
                .collect();
            totals[0] += 1;
            for (i, cell) in cells.iter().enumerate() {
                totals[i + 1] += usize::from(cell != "—");
            }
            rows.push_str(&format!(
                "| {} | `{method}` | {} |\n",
                st.rust,
                cells.join(" | ")
            ));
        }
    }
    format!(
        "{} public methods of {} structures; C reaches {}, Python {}, PHP {}, the CLI {}.\n\n{rows}",
        totals[0],
        STRUCTURES.len(),
        totals[1],
        totals[2],
        totals[3],
        totals[4]
    )
}

#[test]
fn the_guides_parity_table_is_current() {
    let generated = table();
    let path = repo().join("docs/src/parity.md");
    let readme = read(&path);
    let (begin, end) = ("<!-- parity:begin -->\n", "<!-- parity:end -->");
    let start = readme
        .find(begin)
        .expect("docs/src/parity.md has a <!-- parity:begin --> marker")
        + begin.len();
    let stop = readme
        .find(end)
        .expect("docs/src/parity.md has a <!-- parity:end --> marker");
    if readme[start..stop] == generated {
        return;
    }
    if std::env::var_os("MCDS_BLESS").is_some() {
        let updated = format!("{}{generated}{}", &readme[..start], &readme[stop..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "the guide's parity table (docs/src/parity.md) is stale: regenerate it with \
         `MCDS_BLESS=1 cargo test -p mcds-cli --test parity_table` and commit it. Generated:\n{generated}"
    );
}

/// Every method of issue 19's structures is reached by a command, or
/// [`CLI_GAPS`] says why not; and every gap listed is one.
#[test]
fn issue_19_cli_gaps_have_reasons() {
    let surfaces = surfaces();
    let crates = repo().join("crates");
    let mut unexplained = Vec::new();
    let mut listed: BTreeSet<(&str, String)> = BTreeSet::new();
    for st in STRUCTURES.iter().filter(|st| ISSUE_19.contains(&st.rust)) {
        for method in rust_methods(&read(&crates.join(st.src)), st.rust) {
            let reached = surfaces.cell(st, &method, Surface::Cli) != "—";
            let gap = CLI_GAPS
                .iter()
                .any(|(t, m, _)| *t == st.rust && *m == method);
            if gap {
                assert!(
                    !reached,
                    "{}::{method} is reached by the CLI: drop it from CLI_GAPS",
                    st.rust
                );
                listed.insert((st.rust, method));
            } else if !reached {
                unexplained.push(format!("{}::{method}", st.rust));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "no command reaches these, and CLI_GAPS gives no reason: {unexplained:?}"
    );
    for (t, m, why) in CLI_GAPS {
        assert!(!why.is_empty());
        assert!(
            listed.contains(&(*t, m.to_string())),
            "CLI_GAPS lists {t}::{m}, which is no public method of {t}"
        );
    }
}
