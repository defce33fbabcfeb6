//! What one direct server incarnation is: the same scheme as
//! `mcds-memcached`, whose [`Incarnation`] and [`ServerClock`] this backend
//! uses, with the same marker (the key
//! [`INCARNATION_KEY`](mcds_net::INCARNATION_KEY)) and mask
//! (`stable_hash(marker)`). A text client and a meta client on one server
//! therefore hand out the same CAS ids and exptimes. The handshake that
//! reads them over the text protocol is in [`conn`](crate::conn).

use mcds_core::{Clock, SystemClock, Ttl};
pub(crate) use mcds_net::incarnation::{Incarnation, ServerClock};

/// The exptime for `ttl` without a sample of the server's clock (behind a
/// proxy): relative up to 30 days, beyond that an absolute Unix time on this
/// client's clock.
pub(crate) fn client_exptime(ttl: Ttl) -> u32 {
    ttl.to_memcached_exptime(SystemClock.now_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcds_net::Version;
    use std::time::{Duration, Instant};

    #[test]
    fn masking_round_trips_and_never_matching_never_matches() {
        let i = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        for id in [1u64, 2, 12345, u64::MAX - 1] {
            assert_eq!(i.cas_in(i.cas_out(id)), id);
        }
        assert_eq!(i.cas_out(0), 0);
        assert_eq!(i.cas_in(i.never_matching()), u64::MAX);
        // Another incarnation reads the same caller id as another server id.
        let j = Incarnation::new(Version(1, 6, 18), b"other", true, None);
        assert_ne!(j.cas_in(i.cas_out(7)), 7);
    }

    #[test]
    fn exptimes_are_absolute_on_the_servers_clock() {
        let t0 = Instant::now();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        assert_eq!(clock.exptime_at(Ttl::Never, t0), 0);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0), 1_800_000_005);
        let later = t0 + Duration::from_millis(2_001);
        assert_eq!(clock.exptime_at(Ttl::secs(5), later), 1_800_000_008);
        assert_eq!(clock.exptime_at(Ttl::secs(u32::MAX), t0), i32::MAX as u32);
        assert_eq!(client_exptime(Ttl::secs(60)), 60);
        assert!(client_exptime(Ttl::secs(40 * 86_400)) > 1_700_000_000);
    }
}
