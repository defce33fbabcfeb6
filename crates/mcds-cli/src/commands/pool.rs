//! `mcds pool`: the server list the pool's servers record (see
//! `mcds_memcached::pool`), shown and changed.

use crate::args::{Global, PoolCmd};
use crate::context::{CliResult, Failure, line, memcached};
use crate::{INVALID_INPUT, OK};

/// `mcds pool show` and `mcds pool adopt`: they need memcached servers,
/// so they open the concrete store themselves.
pub(crate) fn pool(global: &Global, cmd: &PoolCmd) -> CliResult {
    let Some(store) = memcached(global)? else {
        return Err(Failure {
            code: INVALID_INPUT,
            message: "mcds pool needs memcached servers: the embedded store has none. Set --servers or MCDS_SERVERS (e.g. 127.0.0.1:11211)".into(),
        });
    };
    match cmd {
        PoolCmd::Show => line(store.pool_view()),
        PoolCmd::Adopt { grace } => {
            store.adopt_pool(*grace)?;
            line(format!(
                "adopted on {} servers, in effect in {}: {}",
                store.servers().len(),
                crate::duration::show(*grace),
                store.pool_view()
            ));
        }
    }
    Ok(OK)
}
