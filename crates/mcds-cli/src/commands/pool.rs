//! `mcds pool`: the server list the pool's servers record (see
//! `mcds_memcached::pool`), shown and changed.

use crate::args::Global;
use clap::Subcommand;
use serde_json::json;

use crate::OK;
use crate::context::{CliResult, json_line, line, memcached_servers};

/// `mcds pool show` and `mcds pool adopt`: they need memcached servers,
/// so they open the concrete store themselves.
pub(crate) fn pool(global: &Global, cmd: &PoolCmd) -> CliResult {
    let store = memcached_servers(global, "mcds pool")?;
    match cmd {
        PoolCmd::Show if global.json => json_line(json!({
            "pool": store.pool_view(),
            "servers": store.servers(),
        })),
        PoolCmd::Show => line(store.pool_view()),
        PoolCmd::Adopt { grace } => {
            store.adopt_pool(*grace)?;
            if global.json {
                json_line(json!({
                    "pool": store.pool_view(),
                    "servers": store.servers(),
                    "adopted": true,
                    "grace_ms": grace.as_millis() as u64,
                }));
            } else {
                line(format!(
                    "adopted on {} servers, in effect in {}: {}",
                    store.servers().len(),
                    crate::duration::show(*grace),
                    store.pool_view()
                ));
            }
        }
    }
    Ok(OK)
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

#[derive(Subcommand, Debug)]
pub(crate) enum PoolCmd {
    /// Print this client's list as the servers record it
    Show,
    /// Make the --servers list the pool's, in effect after --grace
    ///
    /// Clients of the old list refuse every command from their next
    /// recheck (30 s by default) on; clients of this list work once the
    /// grace has passed (until then they exit 4: unavailable). Choose a
    /// grace of at least 30 s plus the longest lock TTL plus 3 s, so that
    /// no lock is ever held by an old and a new client at once; 0 makes
    /// it take effect at once (stop every old client first).
    Adopt {
        /// How long until the new list takes effect (e.g. 90s, 5m)
        #[arg(long, value_parser = crate::duration::parse)]
        grace: std::time::Duration,
    },
}
