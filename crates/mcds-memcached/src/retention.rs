//! [`Store::retention`](mcds_core::Store::retention) for memcached: since
//! when a server has lost no item, from its `stats` and a record the
//! clients of the server share.
//!
//! memcached loses items without a reply saying so in four ways, and
//! counts each: a restart (`uptime` starts again), `flush_all`
//! (`cmd_flush`), eviction (`evictions`) and the slab rebalancer's
//! evictions of live items (`slab_reassign_evictions_nomem`,
//! `slab_reassign_busy_deletes`). A server whose counts are all 0 has lost
//! nothing since it started. Once a count is not 0, the stats cannot say
//! *when* the losses were, so the first client to see a new total writes
//! it to the server under [`RETAINED_KEY`] with the time it saw it
//! (`mcds-retained 1 <process start> <losses> <unix ms>`); a later client
//! that finds the same total knows nothing was lost since that time. A
//! record that is itself lost (a flush, an eviction: both counted) or of
//! another process start is replaced, with the time of the replacing
//! read: later than any loss, never earlier.
//!
//! What the counts do not show: `flush_all` with a delay (counted when
//! sent, applied later) and items deleted by a client.

use std::time::Duration;

use mcds_core::{Clock, Error, Io, Key, Op, Reply, Result, Retention, SystemClock, Ttl};

use crate::session::Session;
use crate::store::MemcachedStore;

/// The key under which each server keeps the loss count its clients last
/// saw, and when (see the [module docs](self)). Never expires.
pub const RETAINED_KEY: &str = "__mcds_retained";

/// memcached counts its `uptime` from 2 s before it started (its
/// `process_started` is `time(0) - 2`, so that no relative time is 0).
const UPTIME_HEAD_START: Duration = Duration::from_secs(2);

/// What a `stats` listing says about losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Losses {
    /// The server process's start, in its own seconds (`time − uptime`):
    /// the same for every listing of one process.
    pub(crate) started: u64,
    /// Seconds since (`uptime`).
    pub(crate) uptime: u64,
    /// Items lost since: evictions, rebalancer evictions and flushes.
    pub(crate) count: u64,
}

impl Losses {
    /// Read from a `stats` listing; `None` if it lacks `uptime` or `time`.
    pub(crate) fn of(stats: &[(String, String)]) -> Option<Losses> {
        let stat = |name: &str| {
            stats
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        let (time, uptime) = (stat("time")?, stat("uptime")?);
        let count = [
            "evictions",
            "slab_reassign_evictions_nomem",
            "slab_reassign_busy_deletes",
            "cmd_flush",
        ]
        .into_iter()
        .filter_map(stat)
        .fold(0u64, u64::saturating_add);
        Some(Losses {
            started: time.saturating_sub(uptime),
            uptime,
            count,
        })
    }
}

/// The record's bytes.
pub(crate) fn record(losses: &Losses, since_ms: u64) -> Vec<u8> {
    format!(
        "mcds-retained 1 {} {} {since_ms}",
        losses.started, losses.count
    )
    .into_bytes()
}

/// The time a record vouches for, if it is of `losses`' process and count.
pub(crate) fn vouched(value: &[u8], losses: &Losses) -> Option<u64> {
    let text = std::str::from_utf8(value).ok()?;
    let mut words = text.split(' ');
    if (words.next()?, words.next()?) != ("mcds-retained", "1") {
        return None;
    }
    let mut number = || words.next()?.parse::<u64>().ok();
    let (started, count, since) = (number()?, number()?, number()?);
    ((started, count) == (losses.started, losses.count)).then_some(since)
}

impl MemcachedStore {
    pub(crate) async fn retention_io(&self, io: Io, key: &Key) -> Result<Retention> {
        let index = self.server_for(key);
        let server = &self.servers[index];
        let stats = Session::open(server, &self.config)?.stats_io(io).await?;
        // Every loss the listing counts happened before it was read.
        let read_ms = SystemClock.now_ms();
        let Some(losses) = Losses::of(&stats) else {
            return Err(Error::Protocol {
                server: server.addr.clone(),
                message: "its stats listing has no uptime or time".into(),
            });
        };
        let started_ms = read_ms
            .saturating_sub(losses.uptime.saturating_mul(1000))
            .saturating_add(UPTIME_HEAD_START.as_millis() as u64);
        if losses.count == 0 {
            return Ok(Retention::Since(started_ms.min(read_ms)));
        }
        let record_key = Key::new(RETAINED_KEY)?;
        let item = Session::open(server, &self.config)?
            .execute(io, &Op::Get(&record_key))
            .await
            .and_then(Reply::item)?;
        if let Some(since) = item.and_then(|item| vouched(&item.value, &losses)) {
            return Ok(Retention::Since(since.max(started_ms)));
        }
        // New losses (or no record): nothing was lost since this read.
        let set = Op::Set {
            key: &record_key,
            value: &record(&losses, read_ms),
            ttl: Ttl::Never,
        };
        // A server too full to keep it still answered: the record only
        // saves the next reader from starting at its own time.
        let _ = Session::open(server, &self.config)?.execute(io, &set).await;
        Ok(Retention::Since(read_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn losses_add_every_kind_and_records_match_only_their_count() {
        let stats = listing(&[
            ("uptime", "100"),
            ("time", "1800000100"),
            ("evictions", "3"),
            ("slab_reassign_evictions_nomem", "1"),
            ("cmd_flush", "2"),
        ]);
        let losses = Losses::of(&stats).unwrap();
        assert_eq!(
            losses,
            Losses {
                started: 1_800_000_000,
                uptime: 100,
                count: 6
            }
        );
        let bytes = record(&losses, 42);
        assert_eq!(vouched(&bytes, &losses), Some(42));
        let more = Losses { count: 7, ..losses };
        assert_eq!(vouched(&bytes, &more), None, "a new loss since");
        let restarted = Losses {
            started: 1_800_000_050,
            ..losses
        };
        assert_eq!(vouched(&bytes, &restarted), None, "another process");
        for junk in [
            &b""[..],
            b"mcds-retained 1",
            b"mcds-retained 2 1 6 4",
            b"\xff\xfe",
        ] {
            assert_eq!(vouched(junk, &losses), None);
        }
        assert_eq!(Losses::of(&listing(&[("uptime", "1")])), None);
    }
}
