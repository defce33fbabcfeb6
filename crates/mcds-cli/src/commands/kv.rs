//! `mcds kv` and `mcds stats`: the store itself, for operators: raw
//! operations on single keys (with the --prefix prepended, no escaping),
//! and each memcached server's statistics.

use clap::Subcommand;
use std::time::Duration;

use mcds_core::{Key, Stored, Ttl, Updated};
use serde_json::{Map, Value, json};

use crate::args::Global;
use crate::args::positive_duration;
use crate::context::{CliResult, Ctx, Failure, json_line, line, memcached_servers};
use crate::{NEGATIVE, OK, UNAVAILABLE};

/// The key KEY with the context's prefix in front, as it is: a raw key,
/// not a structure name (nothing is escaped).
fn key(ctx: &Ctx, key: &str) -> Result<Key, Failure> {
    Ok(Key::new(format!("{}{key}", ctx.scope.prefix()))?)
}

/// A `--ttl`: never when absent, else rounded up to whole seconds.
fn ttl(ttl: Option<Duration>) -> Ttl {
    ttl.map_or(Ttl::Never, Ttl::from)
}

/// `mcds kv update`: `Store::update` with a shell command as the function.
/// The command's failure is kept aside (the function itself cannot fail:
/// it declines to write) and reported after the update returns.
fn update(ctx: &Ctx, name: &str, shell: &str, ttl: Ttl, max_attempts: u32) -> CliResult {
    let key = key(ctx, name)?;
    let mut failed: Option<String> = None;
    let mut runs = 0u32;
    let mut f = |current: Option<&[u8]>| -> Option<Vec<u8>> {
        if failed.is_some() {
            return None;
        }
        runs += 1;
        match run_filter(shell, current) {
            Ok(value) => Some(value),
            Err(why) => {
                failed = Some(why);
                None
            }
        }
    };
    let updated = ctx.scope.store().update(&key, ttl, max_attempts, &mut f)?;
    if let Some(why) = failed {
        return Err(Failure {
            code: NEGATIVE,
            message: format!("{why}; nothing was written to {name:?}"),
        });
    }
    if let Updated::Stored { value, cas } = updated {
        if ctx.json {
            json_line(
                json!({ "key": name, "value": String::from_utf8_lossy(&value), "cas": cas.to_string(), "runs": runs }),
            );
        }
    }
    Ok(OK)
}

/// Run `/bin/sh -c shell` with `current` on standard input: its standard
/// output, or why it failed.
fn run_filter(shell: &str, current: Option<&[u8]>) -> Result<Vec<u8>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(shell)
        .env("MCDS_KV_EXISTS", if current.is_some() { "1" } else { "0" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run /bin/sh: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = current.unwrap_or_default().to_vec();
    // Written from a thread: a command that prints before reading all of
    // its input must not deadlock against us.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child
        .wait_with_output()
        .map_err(|e| format!("the command failed: {e}"))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!("the command exited with {}", out.status));
    }
    Ok(out.stdout)
}

pub(crate) fn kv(ctx: &Ctx, cmd: KvCmd) -> CliResult {
    let store = ctx.scope.store();
    match cmd {
        KvCmd::Get { key: name } => match store.get(&key(ctx, &name)?)? {
            Some(item) => {
                let value = String::from_utf8_lossy(&item.value);
                ctx.print(
                    &value,
                    json!({ "key": name, "value": value, "flags": item.flags, "cas": item.cas.to_string() }),
                );
                Ok(OK)
            }
            None => {
                if ctx.json {
                    json_line(json!({ "key": name, "value": null }));
                }
                Ok(NEGATIVE)
            }
        },
        KvCmd::Set {
            key: name,
            value,
            ttl: t,
        } => {
            let cas = store.set(&key(ctx, &name)?, value.as_bytes(), ttl(t))?;
            if ctx.json {
                json_line(json!({ "key": name, "stored": true, "cas": cas.to_string() }));
            }
            Ok(OK)
        }
        KvCmd::Add {
            key: name,
            value,
            ttl: t,
        } => {
            let stored = store.add(&key(ctx, &name)?, value.as_bytes(), ttl(t))?;
            if ctx.json {
                let cas = match stored {
                    Stored::Stored(cas) => json!(cas.to_string()),
                    Stored::NotStored => Value::Null,
                };
                json_line(json!({ "key": name, "stored": stored.is_stored(), "cas": cas }));
            }
            Ok(if stored.is_stored() { OK } else { NEGATIVE })
        }
        KvCmd::Delete { key: name } => {
            let existed = store.delete(&key(ctx, &name)?)?;
            if ctx.json {
                json_line(json!({ "key": name, "deleted": existed }));
            }
            Ok(if existed { OK } else { NEGATIVE })
        }
        KvCmd::Incr { key: name, delta } => {
            match store.incr(&key(ctx, &name)?, delta.unwrap_or(1))? {
                Some(value) => {
                    ctx.print(value, json!({ "key": name, "value": value }));
                    Ok(OK)
                }
                None => {
                    if ctx.json {
                        json_line(json!({ "key": name, "value": null }));
                    }
                    Ok(NEGATIVE)
                }
            }
        }
        KvCmd::Update {
            key: name,
            shell,
            ttl: t,
            max_attempts,
        } => update(ctx, &name, &shell, ttl(t), max_attempts),
        KvCmd::Touch { key: name, ttl: t } => {
            let found = store.touch(&key(ctx, &name)?, Ttl::from(t))?;
            if ctx.json {
                json_line(json!({ "key": name, "touched": found }));
            }
            Ok(if found { OK } else { NEGATIVE })
        }
    }
}

/// The statistics `mcds stats` shows in its table, in this order.
const COLUMNS: [&str; 8] = [
    "version",
    "uptime",
    "curr_items",
    "bytes",
    "get_hits",
    "get_misses",
    "evictions",
    "curr_connections",
];

/// `mcds stats`: needs memcached servers, so it opens the concrete store
/// itself rather than a [`Ctx`].
pub(crate) fn stats(global: &Global) -> CliResult {
    let store = memcached_servers(global, "mcds stats")?;
    let results = store.stats();
    // Each error names its server.
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().map(ToString::to_string))
        .collect();
    if global.json {
        let servers: Vec<Value> = results
            .iter()
            .map(|(server, r)| match r {
                Ok(stats) => {
                    let stats: Map<String, Value> = stats
                        .iter()
                        .map(|(name, value)| (name.clone(), stat_value(value)))
                        .collect();
                    json!({ "server": server, "stats": stats })
                }
                Err(e) => json!({ "server": server, "error": e.to_string() }),
            })
            .collect();
        json_line(json!({ "servers": servers }));
    } else {
        let mut rows = vec![
            std::iter::once("server")
                .chain(COLUMNS)
                .map(String::from)
                .collect::<Vec<_>>(),
        ];
        for (server, r) in &results {
            let mut row = vec![server.clone()];
            row.extend(COLUMNS.iter().map(|column| {
                r.as_ref()
                    .ok()
                    .and_then(|stats| stats.iter().find(|(name, _)| name == column))
                    .map_or_else(|| "-".to_string(), |(_, value)| value.clone())
            }));
            rows.push(row);
        }
        line(table(&rows).trim_end());
    }
    if failed.is_empty() {
        return Ok(OK);
    }
    Err(Failure {
        code: UNAVAILABLE,
        message: format!(
            "{} of {} servers did not answer: {}",
            failed.len(),
            results.len(),
            failed.join("; ")
        ),
    })
}

/// A statistic for JSON: integers as numbers, anything else as the string
/// the server sent.
fn stat_value(value: &str) -> Value {
    if let Ok(n) = value.parse::<u64>() {
        return json!(n);
    }
    if let Ok(n) = value.parse::<i64>() {
        return json!(n);
    }
    json!(value)
}

/// `rows` as left-aligned columns two spaces apart, one line each.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

#[derive(Subcommand, Debug)]
pub(crate) enum KvCmd {
    /// Print KEY's value (lossy UTF-8, then a newline); exit 1 if absent
    ///
    /// --json gives the value, its flags and its CAS id (as mcds clients
    /// see it, masked per server incarnation, not memcached's raw id).
    Get {
        /// The key (after --prefix)
        key: String,
    },
    /// Store VALUE under KEY, replacing any value
    Set {
        /// The key (after --prefix)
        key: String,
        /// The value
        value: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
    },
    /// Store VALUE under KEY only if KEY is absent; exit 1 if it exists
    Add {
        /// The key (after --prefix)
        key: String,
        /// The value
        value: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
    },
    /// Delete KEY; exit 1 if it was absent
    Delete {
        /// The key (after --prefix)
        key: String,
    },
    /// Add DELTA (default 1) to the number under KEY and print the result;
    /// exit 1 if KEY is absent
    ///
    /// memcached's incr: nothing is created when KEY is absent, a value that
    /// is not a decimal number exits 3, and the result wraps around at 2^64.
    Incr {
        /// The key (after --prefix)
        key: String,
        /// How much to add (default 1)
        delta: Option<u64>,
    },
    /// Replace KEY's value by what a command makes of it, atomically (CAS)
    ///
    /// Runs `/bin/sh -c SHELL_COMMAND` with KEY's value on standard input
    /// (nothing when absent; MCDS_KV_EXISTS is 1 or 0) and writes exactly
    /// what it prints on standard output (a trailing newline included: use
    /// printf) as the new value, only if nobody changed
    /// KEY meanwhile; if someone did, runs it again on the new value (up to
    /// --max-attempts times, then exit 5). The command may run several
    /// times: it must only compute. If it exits non-zero, nothing is
    /// written and mcds exits 1. Refused (exit 3) on a store without CAS.
    ///
    ///   mcds kv update config:version -c 'printf %s $(( $(cat) + 0 + 1 ))'
    #[command(verbatim_doc_comment)]
    Update {
        /// The key (after --prefix)
        key: String,
        /// The command: run with /bin/sh -c, KEY's value on standard input
        #[arg(short = 'c', long = "command", value_name = "SHELL_COMMAND")]
        shell: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
        /// How many reads (and runs of the command) before giving up on a
        /// key other clients keep changing
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
        max_attempts: u32,
    },
    /// Make KEY expire --ttl from now, value unchanged; exit 1 if absent
    Touch {
        /// The key (after --prefix)
        key: String,
        /// The new time to live, rounded up to whole seconds (30, 5m, 1d)
        #[arg(long, value_parser = positive_duration)]
        ttl: std::time::Duration,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_table_aligns_columns() {
        let rows = vec![
            vec!["server".to_string(), "uptime".to_string()],
            vec!["127.0.0.1:11211".to_string(), "5".to_string()],
        ];
        assert_eq!(
            table(&rows),
            "server           uptime\n127.0.0.1:11211  5\n"
        );
    }

    #[test]
    fn integer_stats_become_numbers() {
        assert_eq!(stat_value("42"), json!(42));
        assert_eq!(stat_value("-1"), json!(-1));
        assert_eq!(stat_value("1.6.18"), json!("1.6.18"));
        assert_eq!(stat_value("0.012345"), json!("0.012345"));
    }
}
