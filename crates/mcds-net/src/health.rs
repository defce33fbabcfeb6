//! A server's health between dials: after a failed dial it is marked down
//! for a backoff that grows with each failure, so that callers get
//! [`Error::ServerDown`] at once instead of each waiting out a connect
//! timeout; the next dial after the backoff tries again.

use std::io;
use std::time::{Duration, Instant};

use mcds_core::{Backoff, Error};
use parking_lot::Mutex;

use crate::transport::{is_permanent, is_timeout};

/// The timing of dials: how long one may take and how long a server that
/// failed one is left alone (the backends' builder options
/// `connect_timeout`, `io_timeout` and `down_backoff`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DialTiming {
    /// How long a connect may take.
    pub connect_timeout: Duration,
    /// How long each exchange may take (the handshake's too).
    pub io_timeout: Duration,
    /// The first down backoff.
    pub down_backoff_base: Duration,
    /// The longest, and the one after a failure retrying cannot fix
    /// (refused credentials, a certificate that does not verify).
    pub down_backoff_max: Duration,
}

impl Default for DialTiming {
    fn default() -> DialTiming {
        DialTiming {
            connect_timeout: crate::DEFAULT_TIMEOUT,
            io_timeout: crate::DEFAULT_TIMEOUT,
            down_backoff_base: Duration::from_millis(50),
            down_backoff_max: Duration::from_secs(1),
        }
    }
}

#[derive(Default)]
struct State {
    down_until: Option<Instant>,
    reason: String,
    backoff: Option<Backoff>,
}

/// One server's health (see the [module docs](self)).
#[derive(Default)]
pub struct Health(Mutex<State>);

impl Health {
    /// [`Error::ServerDown`] while the server is in its backoff after a
    /// failed dial (with the reason and how long is left), else `None`.
    pub fn down(&self, addr: &str) -> Option<Error> {
        let state = self.0.lock();
        let until = state.down_until?;
        let now = Instant::now();
        (now < until).then(|| Error::ServerDown {
            server: addr.to_string(),
            reason: state.reason.clone(),
            retry_in: until - now,
        })
    }

    /// Record how a dial (made after [`down`](Health::down) said `None`)
    /// went: a success clears the backoff; a failure starts or grows it (to
    /// the longest at once for a failure retrying cannot fix) and becomes
    /// [`Error::Timeout`] or [`Error::Io`] naming the server.
    pub fn after_dial<C>(
        &self,
        addr: &str,
        timing: &DialTiming,
        dialed: io::Result<C>,
    ) -> Result<C, Error> {
        match dialed {
            Ok(conn) => {
                let mut state = self.0.lock();
                state.down_until = None;
                state.backoff = None;
                Ok(conn)
            }
            Err(source) => {
                let mut state = self.0.lock();
                let backoff = state.backoff.get_or_insert_with(|| {
                    Backoff::new(timing.down_backoff_base, timing.down_backoff_max)
                });
                let ceiling = backoff.ceiling();
                // Half the ceiling plus a random half: callers that failed
                // together do not all come back at the same instant.
                let wait = if is_permanent(&source) {
                    timing.down_backoff_max
                } else {
                    ceiling / 2 + backoff.next_delay() / 2
                };
                state.down_until = Some(Instant::now() + wait);
                state.reason = source.to_string();
                if is_timeout(&source) {
                    // Connecting, or the handshake after it.
                    Err(Error::Timeout {
                        server: addr.to_string(),
                        after: timing.connect_timeout.max(timing.io_timeout),
                    })
                } else {
                    Err(Error::Io {
                        server: addr.to_string(),
                        source,
                    })
                }
            }
        }
    }
}
