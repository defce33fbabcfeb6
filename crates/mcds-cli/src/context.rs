//! What every command runs in: the store it opens (memcached, or the
//! embedded store), the scope and output settings of [`Ctx`], and
//! [`Failure`], which maps an [`mcds_core::Error`] to its exit code.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, MemoryStore, Scope, Store};
use mcds_memcached::MemcachedStore;
use mcds_url::{StoreUrl, UrlKind};

use crate::args::Global;
use crate::report::Report;
use crate::{CONFIG, INVALID_INPUT, UNAVAILABLE, USAGE};

/// A failure: what to print and which code to exit with.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        // Bad input, or stored bytes the command cannot use: the same
        // call fails again. A store that cannot do this at all (memcached
        // -C, a proxy) is its configuration's. Everything else is the
        // service's state, which a retry may find changed.
        let stored_data = matches!(
            e,
            Error::NonNumeric { .. } | Error::Corrupt { .. } | Error::Lost { .. }
        );
        // A server that refuses our credentials or TLS handshake (or wants
        // credentials we did not give) is configured otherwise: retrying
        // does not help.
        let refused = matches!(&e, Error::Io { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied);
        let code = if matches!(e, Error::Unsupported { .. }) || refused {
            CONFIG
        } else if e.is_invalid_input() || stored_data {
            INVALID_INPUT
        } else {
            UNAVAILABLE
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// A failure opening the store --servers names: what it says is wrong
/// (invalid input: an address that does not resolve, a file that is not
/// there, a bad prefix) is its configuration's ([`CONFIG`]); anything else
/// as any error.
fn config_failure(e: Error) -> Failure {
    if e.is_invalid_input() {
        Failure {
            code: CONFIG,
            message: e.to_string(),
        }
    } else {
        e.into()
    }
}

/// What a command handler returns: the exit code, or a failure to report.
pub(crate) type CliResult = Result<u8, Failure>;

/// What a command handler works with: the scope its structures are built
/// on, and how to print.
pub(crate) struct Ctx {
    pub(crate) scope: Scope,
    pub(crate) json: bool,
    /// Where errors, warnings and `-v` progress go.
    pub(crate) report: Report,
    /// The memcached store behind `scope`, for what only it can answer
    /// (a key's time left); `None` on the embedded store.
    pub(crate) memcached: Option<Arc<MemcachedStore>>,
}

impl Ctx {
    /// Print `text`, or `value` as one line of JSON under `--json`.
    pub(crate) fn print(&self, text: impl std::fmt::Display, value: serde_json::Value) {
        if self.json {
            json_line(value);
        } else {
            line(text);
        }
    }
}

/// What a command with `--key` works on: the structure NAME in the scope,
/// or an exact key another application uses (no naming, no prefix).
pub(crate) enum Target {
    Name(String),
    Key(Key),
}

impl Target {
    /// From NAME and `--key` (clap requires one of them). With `--key`,
    /// NAME must be left out (`usage` shows how), and so must `--prefix`,
    /// which an exact key does not take: both are usage errors rather than
    /// a guess. A bad key is invalid input.
    pub(crate) fn new(
        ctx: &Ctx,
        name: Option<String>,
        key: Option<String>,
        usage: &str,
    ) -> Result<Target, Failure> {
        let usage_error = |message: String| Failure {
            code: USAGE,
            message,
        };
        match (name, key) {
            (Some(name), None) => Ok(Target::Name(name)),
            (Some(name), Some(_)) => Err(usage_error(format!(
                "give NAME or --key KEY, not both (got NAME {name:?}): {usage}"
            ))),
            (None, Some(_)) if !ctx.scope.prefix().is_empty() => Err(usage_error(format!(
                "--key KEY is the exact key: --prefix {:?} does not apply to it; leave --prefix out (a prefix the other application uses belongs in KEY)",
                ctx.scope.prefix()
            ))),
            (None, Some(key)) => Ok(Target::Key(Key::new(key)?)),
            (None, None) => Err(usage_error(format!("give NAME or --key KEY: {usage}"))),
        }
    }

    /// The NAME or KEY as given, for messages and JSON.
    pub(crate) fn text(&self) -> String {
        match self {
            Target::Name(name) => name.clone(),
            Target::Key(key) => String::from_utf8_lossy(key.as_bytes()).into_owned(),
        }
    }

    /// `value` (a JSON object) with the target added: `"<kind>": NAME`, or
    /// `"key": KEY`.
    pub(crate) fn json(&self, kind: &str, mut value: serde_json::Value) -> serde_json::Value {
        let field = match self {
            Target::Name(_) => kind,
            Target::Key(_) => "key",
        };
        if let Some(object) = value.as_object_mut() {
            object.insert(field.to_string(), self.text().into());
        }
        value
    }

    /// `<kind> "NAME"` or `<kind> on key "KEY"`, for messages.
    pub(crate) fn describe(&self, kind: &str) -> String {
        match self {
            Target::Name(name) => format!("{kind} {name:?}"),
            Target::Key(_) => format!("{kind} on key {:?}", self.text()),
        }
    }
}

/// The largest integer every JSON reader holds exactly: readers that parse
/// numbers as doubles (jq 1.6, JavaScript, most dashboards) round past it.
const JSON_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `value` with every integer beyond ±(2^53 − 1) written as a decimal
/// string, so no reader rounds it: a counter, sum, CAS id or fencing token
/// is either a JSON number that a double holds exactly, or a string of its
/// exact digits.
pub(crate) fn exact_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            let beyond = n
                .as_u64()
                .map(|u| u > JSON_SAFE_INTEGER)
                .or_else(|| n.as_i64().map(|i| i.unsigned_abs() > JSON_SAFE_INTEGER));
            if beyond == Some(true) {
                Value::String(n.to_string())
            } else {
                Value::Number(n)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(exact_numbers).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, exact_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Print `value` as one line of JSON, its large integers as strings (see
/// [`exact_numbers`]).
pub(crate) fn json_line(value: serde_json::Value) {
    line(exact_numbers(value));
}

/// Print one line on stdout. If stdout is closed (the reader of a pipe went
/// away, as with `| head -1`), mcds exits quietly with 0: Rust ignores
/// SIGPIPE, so `println!` would panic instead.
pub(crate) fn line(text: impl std::fmt::Display) {
    use std::io::Write;
    // Stdout is line-buffered: the newline sends it, and reports a failure.
    if let Err(e) = writeln!(std::io::stdout().lock(), "{text}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(i32::from(crate::OK));
        }
        eprintln!("mcds: error: cannot write to stdout: {e}");
        std::process::exit(i32::from(UNAVAILABLE));
    }
}

/// The store a command uses, and the same store as memcached when it is.
type Opened = (Arc<dyn Store>, Option<Arc<MemcachedStore>>);

/// --servers (or MCDS_SERVERS) read as a store URL: a server list, or
/// `memcached://…?options`, or `memory://…`. `None` when it is not given.
fn store_url(cli: &Global) -> Result<Option<StoreUrl>, Failure> {
    let Some(text) = cli
        .servers
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    StoreUrl::parse(text).map(Some).map_err(|e| Failure {
        code: CONFIG,
        message: e.to_string(),
    })
}

/// Whether the command runs on the embedded store (no servers given, or
/// `memory://`).
fn embedded(url: Option<&StoreUrl>) -> bool {
    url.is_none_or(|u| matches!(u.kind, UrlKind::Memory { .. }))
}

fn connect(cli: &Global, url: Option<&StoreUrl>) -> Result<Opened, Failure> {
    // A quorum (`?quorum`) is several stores, one per server, for locks:
    // opened by the URL, never as one pool.
    if let Some(url) = url.filter(|u| matches!(u.kind, UrlKind::Memcached { quorum: true, .. })) {
        let mut url = with_cli_timeouts(cli, url);
        url.prefix.clear();
        let scope = url.open().map_err(config_failure)?;
        return Ok((Arc::clone(scope.store()), None));
    }
    if let Some(store) = memcached_of(cli, url)? {
        let store = Arc::new(store);
        return Ok((store.clone(), Some(store)));
    }
    let Some(url) = url else {
        return Ok((Arc::new(MemoryStore::new()), None));
    };
    // The text or embedded store, opened by the URL itself: --timeout-ms
    // for the timeouts it leaves out, and the prefix applied by the caller,
    // as for memcached.
    let mut url = with_cli_timeouts(cli, url);
    url.prefix.clear();
    let scope = url.open().map_err(config_failure)?;
    Ok((Arc::clone(scope.store()), None))
}

/// The URL with --timeout-ms for the timeouts it leaves out.
fn with_cli_timeouts(cli: &Global, url: &StoreUrl) -> StoreUrl {
    let mut url = url.clone();
    let timeout = Duration::from_millis(cli.timeout_ms.max(1));
    if let UrlKind::Text {
        connect_timeout,
        io_timeout,
        ..
    }
    | UrlKind::Memcached {
        connect_timeout,
        io_timeout,
        ..
    } = &mut url.kind
    {
        connect_timeout.get_or_insert(timeout);
        io_timeout.get_or_insert(timeout);
    }
    url
}

/// The URL's memcached store: its options, and --timeout-ms for the
/// timeouts the URL does not set.
fn memcached_of(cli: &Global, url: Option<&StoreUrl>) -> Result<Option<MemcachedStore>, Failure> {
    let Some(url) = url else {
        return Ok(None);
    };
    with_cli_timeouts(cli, url)
        .memcached_store()
        .transpose()
        .map_err(config_failure)
}

/// The memcached store of --servers for `command` (`mcds stats`, `mcds
/// pool`), which asks each server something only memcached answers. Without
/// one, a [`CONFIG`] failure saying what was given instead and what to give.
pub(crate) fn memcached_servers(cli: &Global, command: &str) -> Result<MemcachedStore, Failure> {
    let url = store_url(cli)?;
    if let Some(store) = memcached_of(cli, url.as_ref())? {
        return Ok(store);
    }
    let given = match url.as_ref().map(|u| &u.kind) {
        None => "no --servers (or MCDS_SERVERS) was given, and the embedded store has no servers",
        Some(UrlKind::Memory { .. }) => "memory:// is the embedded store, which has no servers",
        Some(UrlKind::Text { proxy: true, .. }) => {
            "a text:// store with proxy talks to a proxy (such as twemproxy), not to each server"
        }
        Some(UrlKind::Text { .. }) => {
            "a text:// store speaks the classic protocol, which mcds uses for data only; give the same servers as memcached://host:port"
        }
        Some(_) => "the store URL names no memcached servers",
    };
    Err(Failure {
        code: CONFIG,
        message: format!(
            "{command} needs memcached servers, connected directly: {given}. Set --servers or MCDS_SERVERS to the servers themselves (e.g. 127.0.0.1:11211,127.0.0.1:11212)"
        ),
    })
}

/// The store and output settings of one command, opened only for the
/// commands that use a store. `lock` refuses the embedded store: a lock
/// there excludes nobody, so every host would run the command.
pub(crate) fn open(cli: &Global, for_lock: bool) -> Result<Ctx, Failure> {
    let report = Report::new(cli.json, cli.verbose);
    let url = store_url(cli)?;
    let embedded = embedded(url.as_ref());
    if embedded && for_lock {
        return Err(Failure {
            code: CONFIG,
            message: "mcds lock needs memcached servers: a lock on the embedded store excludes nobody, so every host would run the command. Set --servers or MCDS_SERVERS (e.g. 127.0.0.1:11211)".into(),
        });
    }
    if embedded {
        report.warn(
            "no --servers (or MCDS_SERVERS) given: using an embedded store whose state ends with this command",
            serde_json::json!({ "store": "embedded" }),
        );
    }
    let (store, memcached) = connect(cli, url.as_ref())?;
    if let Some(m) = &memcached {
        report.info(
            &format!("servers: {}", m.servers().join(", ")),
            serde_json::json!({ "servers": m.servers() }),
        );
    }
    let (prefix, from_url) = match url.as_ref().map(|u| u.prefix.as_str()) {
        Some(p) if !p.is_empty() && !cli.prefix.is_empty() => {
            return Err(Failure {
                code: USAGE,
                message: format!(
                    "the key prefix is given twice: --prefix {:?} and prefix={p:?} in --servers; keep one",
                    cli.prefix
                ),
            });
        }
        Some(p) if !p.is_empty() => (p, true),
        _ => (cli.prefix.as_str(), false),
    };
    // A bad prefix in --servers is the store URL's (78), one in --prefix
    // the command line's (3).
    let scope = Scope::new(store).with_prefix(prefix).map_err(|e| {
        if from_url {
            config_failure(e)
        } else {
            e.into()
        }
    })?;
    Ok(Ctx {
        scope,
        json: cli.json,
        report,
        memcached,
    })
}
