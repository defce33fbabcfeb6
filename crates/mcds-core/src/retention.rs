//! [`Retention`]: what a store can say about the items it may have lost,
//! so that a structure whose reads cannot otherwise tell a lost item from
//! one never written (a time series' bucket) can refuse to guess.

/// Since when the server behind a key has lost none of the items it held
/// ([`Store::retention`](crate::Store::retention)).
///
/// memcached loses items in four ways that no reply reports: a restart
/// (everything), `flush_all` (everything), eviction under memory pressure
/// (any item, least recently used first) and the slab rebalancer evicting
/// to move a page. A structure that reads an absent item as "nothing was
/// written" (a time series' empty bucket) or a present one as "everything
/// written is here" (a bucket re-created after an eviction holds only the
/// samples since) is right only for data written after the server's last
/// loss: this is that time.
///
/// # What a read cannot see
///
/// Most structures cannot turn a loss into an error, and say so in their
/// docs ("What a restart or an eviction loses"). The reason is the same
/// for all of them:
///
/// * **An absent item reads like one never written.** memcached keeps no
///   record of the keys it lost, and its statistics (the source of this
///   type) say *that* it lost items and when, never *which*. A counter
///   whose item is gone, a set, a Bloom filter block: each is what a
///   structure never written looks like.
/// * **A witness goes with the data.** A record that the structure exists
///   (a creation time, a count of members) is one more item, on the same
///   server or on another: a restart takes it too, an eviction may, and
///   the next write must create it again — as it must after the first
///   write ever. The writer cannot tell the two apart either.
/// * **"Refuse after any loss" would refuse forever.** A read could fail
///   whenever its server lost anything since the structure was made. But
///   a cache that evicts does so all the time, and the time the structure
///   was made is itself stored in an item. Only a structure whose items
///   carry their own time in their keys can bound the question: a time
///   series' bucket that starts after the server's last loss cannot have
///   lost anything, so `TimeSeries` and `PackedSeries` refuse only the
///   buckets that could (their reads fail with
///   [`Error::Lost`](crate::Error::Lost)).
///
/// An application that knows when it made a structure (a deployment, a
/// migration, a job's start) can ask itself:
/// `store.retention(&key)?.since_ms()` later than that time means the
/// server behind `key` lost items since, perhaps this structure's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retention {
    /// The store never drops an item before its TTL or a delete: the
    /// embedded store that has evicted and flushed nothing.
    Complete,
    /// The server has lost no item since this Unix time in milliseconds,
    /// by the clock of the process that learned it (allow for skew). It
    /// may have lost items before (or is newer than that).
    Since(u64),
    /// The store cannot tell (a proxy keeps its servers' statistics to
    /// itself): why, for the error a caller sees.
    Unknown(String),
}

impl Retention {
    /// The Unix milliseconds since which nothing was lost: 0 for
    /// [`Complete`](Retention::Complete), `None` for
    /// [`Unknown`](Retention::Unknown).
    pub fn since_ms(&self) -> Option<u64> {
        match self {
            Retention::Complete => Some(0),
            Retention::Since(ms) => Some(*ms),
            Retention::Unknown(_) => None,
        }
    }

    /// The later of two: what a read of items behind both can count on.
    pub fn and(self, other: Retention) -> Retention {
        match (self, other) {
            (Retention::Unknown(why), _) | (_, Retention::Unknown(why)) => Retention::Unknown(why),
            (Retention::Complete, r) | (r, Retention::Complete) => r,
            (Retention::Since(a), Retention::Since(b)) => Retention::Since(a.max(b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Retention;

    #[test]
    fn the_later_loss_wins() {
        let unknown = Retention::Unknown("a proxy".into());
        assert_eq!(
            Retention::Complete.and(Retention::Since(5)),
            Retention::Since(5)
        );
        assert_eq!(
            Retention::Since(9).and(Retention::Since(5)),
            Retention::Since(9)
        );
        assert_eq!(Retention::Since(9).and(unknown.clone()), unknown);
        assert_eq!(
            Retention::Complete.and(Retention::Complete).since_ms(),
            Some(0)
        );
        assert_eq!(unknown.since_ms(), None);
    }
}
