//! [`Store::retention`](mcds_core::Store::retention) for memcached: since
//! when a server has lost no item, from its `stats` and a record the
//! clients of the server share.
//!
//! memcached loses items without a reply saying so in four ways, and
//! counts each: a restart (`uptime` starts again), `flush_all`
//! (`cmd_flush`), eviction (`evictions`) and the slab rebalancer's
//! evictions of live items (`slab_reassign_evictions_nomem`,
//! `slab_reassign_busy_deletes`). The counts cannot say *when* the losses
//! were, so the clients of a server keep a record under [`RETAINED_KEY`]:
//! the loss count a client saw, and the time it saw it
//! (`mcds-retained 2 <process start> <losses> <unix ms> <gets>
//! <connections>`). A later client that finds the same process and the
//! same count knows nothing was lost since that time; one that finds a
//! higher count writes a new record with its own time, later than any loss
//! it counts. A server with no record whose count is 0 has lost nothing
//! since it started.
//!
//! Counts can also go *down*: an operator's `stats reset` zeroes them, and
//! so does a warm restart (`-e`), which keeps the items and the process
//! start. Losses counted before that can no longer be told from none, so a
//! count below the record's, or fewer `cmd_get`s or connections than the
//! record saw (both only grow between resets), is taken as a loss now: the
//! record is written again with the time of this read.
//!
//! What the counts do not show: `flush_all` with a delay (counted when
//! sent, applied later); items deleted by a client; losses that a `stats
//! reset` or warm restart erased before any client read them (with no
//! record yet, or once every count has climbed back to the record's).

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
    /// Items lost since (or since the counts were reset): evictions,
    /// rebalancer evictions and flushes.
    pub(crate) count: u64,
    /// `cmd_get`: grows with every read, back to 0 on a reset.
    pub(crate) gets: u64,
    /// `total_connections`: grows with every connection, back to 0 on a
    /// reset.
    pub(crate) connections: u64,
}

/// The `stats` counters of items memcached dropped before their time:
/// eviction, the slab rebalancer's evictions of live items (which
/// `evictions` does not count) and `flush_all`. The pool record's claim
/// rule reads the same ones (`conn.rs`).
pub(crate) const LOSS_STATS: [&str; 4] = [
    "evictions",
    "slab_reassign_evictions_nomem",
    "slab_reassign_busy_deletes",
    "cmd_flush",
];

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
        let count = LOSS_STATS
            .iter()
            .filter_map(|name| stat(name))
            .fold(0u64, u64::saturating_add);
        Some(Losses {
            started: time.saturating_sub(uptime),
            uptime,
            count,
            gets: stat("cmd_get").unwrap_or(0),
            connections: stat("total_connections").unwrap_or(0),
        })
    }
}

/// The record's bytes: `losses` seen, and nothing lost since `since_ms`.
pub(crate) fn record(losses: &Losses, since_ms: u64) -> Vec<u8> {
    format!(
        "mcds-retained 2 {} {} {since_ms} {} {}",
        losses.started, losses.count, losses.gets, losses.connections
    )
    .into_bytes()
}

/// What a record says of the listing `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// The same process and loss count: nothing lost since this time.
    Since(u64),
    /// Losses since the record (a higher count), or counts reset since
    /// (lower), or another process, or not a record of this format.
    Stale,
}

/// Judge the record `value` against the listing `now`.
pub(crate) fn judge(value: &[u8], now: &Losses) -> Judged {
    let parsed = (|| {
        let text = std::str::from_utf8(value).ok()?;
        let mut words = text.split(' ');
        if (words.next()?, words.next()?) != ("mcds-retained", "2") {
            return None;
        }
        let mut number = || words.next()?.parse::<u64>().ok();
        let fields = [number()?, number()?, number()?, number()?, number()?];
        words.next().is_none().then_some(fields)
    })();
    match parsed {
        Some([started, count, since, gets, connections])
            if started == now.started
                && count == now.count
                && gets <= now.gets
                && connections <= now.connections =>
        {
            Judged::Since(since)
        }
        _ => Judged::Stale,
    }
}

impl MemcachedStore {
    pub(crate) async fn retention_io(&self, io: Io, key: &Key) -> Result<Retention> {
        let index = self.server_for(key);
        let server = &self.servers[index];
        let record_key = Key::new(RETAINED_KEY)?;
        // The record first, then the stats: a loss counted after the
        // record was read only makes the two disagree (a new record).
        let item = Session::open(server, &self.config)?
            .execute(io, &Op::Get(&record_key))
            .await
            .and_then(Reply::item)?;
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
            .saturating_add(UPTIME_HEAD_START.as_millis() as u64)
            .min(read_ms);
        let since = match item.map(|item| judge(&item.value, &losses)) {
            Some(Judged::Since(since)) => return Ok(Retention::Since(since.max(started_ms))),
            // No record, no loss counted: nothing lost since the start.
            None if losses.count == 0 => started_ms,
            // A loss since the record, or a reset that may hide one: none
            // since this read.
            _ => read_ms,
        };
        let set = Op::Set {
            key: &record_key,
            value: &record(&losses, since),
            ttl: Ttl::Never,
        };
        // A server too full to keep it still answered: the record only
        // saves the next reader from starting at its own time.
        let _ = Session::open(server, &self.config)?.execute(io, &set).await;
        Ok(Retention::Since(since))
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

    fn losses() -> Losses {
        Losses::of(&listing(&[
            ("uptime", "100"),
            ("time", "1800000100"),
            ("evictions", "3"),
            ("slab_reassign_evictions_nomem", "1"),
            ("cmd_flush", "2"),
            ("cmd_get", "500"),
            ("total_connections", "7"),
        ]))
        .unwrap()
    }

    #[test]
    fn losses_add_every_kind() {
        assert_eq!(
            losses(),
            Losses {
                started: 1_800_000_000,
                uptime: 100,
                count: 6,
                gets: 500,
                connections: 7
            }
        );
        assert_eq!(Losses::of(&listing(&[("uptime", "1")])), None);
    }

    #[test]
    fn a_record_vouches_only_for_its_process_and_count() {
        let seen = losses();
        let bytes = record(&seen, 42);
        assert_eq!(judge(&bytes, &seen), Judged::Since(42));
        // More reads and connections since: the same losses.
        let busier = Losses {
            gets: 900,
            connections: 9,
            ..seen
        };
        assert_eq!(judge(&bytes, &busier), Judged::Since(42));
        let more = Losses { count: 7, ..seen };
        assert_eq!(judge(&bytes, &more), Judged::Stale, "a new loss since");
        let restarted = Losses {
            started: 1_800_000_050,
            ..seen
        };
        assert_eq!(judge(&bytes, &restarted), Judged::Stale, "another process");
        for junk in [
            &b""[..],
            b"mcds-retained 2",
            b"mcds-retained 1 1800000000 6 42",
            b"mcds-retained 2 1800000000 6 42 500 7 extra",
            b"\xff\xfe",
        ] {
            assert_eq!(judge(junk, &seen), Judged::Stale);
        }
    }

    /// `stats reset` (or a warm restart) zeroes the counts: a lower loss
    /// count, or fewer gets or connections than the record saw, is stale —
    /// also when the loss count has climbed back to the record's.
    #[test]
    fn counts_that_went_down_are_stale() {
        let seen = losses();
        let bytes = record(&seen, 42);
        let reset = Losses {
            count: 0,
            gets: 3,
            connections: 1,
            ..seen
        };
        assert_eq!(judge(&bytes, &reset), Judged::Stale);
        let climbed_back = Losses {
            gets: 20,
            connections: 2,
            ..seen
        };
        assert_eq!(judge(&bytes, &climbed_back), Judged::Stale);
    }
}
