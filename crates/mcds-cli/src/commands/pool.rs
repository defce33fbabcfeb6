//! `mcds pool`: the server list the pool's servers record (see
//! `mcds_memcached::pool`), shown and changed.

use crate::args::{Global, PoolCmd};
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
