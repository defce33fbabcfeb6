//! The one error type of every mcds store and structure.

use std::time::Duration;

/// What went wrong, and what to do about it.
///
/// Normal outcomes of memcached commands (a miss, "not stored", a CAS
/// conflict) are *values* in the [`Store`](crate::Store) API, never errors.
/// An `Error` is something the caller has to react to. Every message says
/// what happened and what to do next.
///
/// The variants fall into groups:
///
/// * **Your input** — [`InvalidKey`](Error::InvalidKey),
///   [`ValueTooLarge`](Error::ValueTooLarge),
///   [`InvalidArgument`](Error::InvalidArgument): nothing was sent; fix the
///   call.
/// * **Stored data** — [`NonNumeric`](Error::NonNumeric),
///   [`Corrupt`](Error::Corrupt): the bytes under a key are not what the
///   operation expects; [`Lost`](Error::Lost): the server may have dropped
///   data the read would need (a restart, flush or eviction).
/// * **Transport** — [`Io`](Error::Io), [`Timeout`](Error::Timeout),
///   [`ServerDown`](Error::ServerDown): the request was *not* applied,
///   retrying is safe.
///   [`Ambiguous`](Error::Ambiguous): the request was sent and no reply came,
///   so it may or may not have been applied.
/// * **Server** — [`OutOfMemory`](Error::OutOfMemory),
///   [`Server`](Error::Server), [`Protocol`](Error::Protocol).
/// * **Contention** — [`Conflict`](Error::Conflict): a CAS loop kept losing;
///   [`WaitTimeout`](Error::WaitTimeout): a blocking wait (a lock) gave up.
/// * [`Unsupported`](Error::Unsupported): this backend cannot do that.
/// * [`Internal`](Error::Internal): a bug.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The key is empty, longer than 250 bytes, or contains ASCII whitespace
    /// or control bytes. Nothing was sent.
    #[error(
        "invalid key {key}: {reason}; keys are 1..=250 bytes with no spaces or control bytes (0x00-0x20, 0x7f) — use a shorter name or encode it (hex, base64)"
    )]
    InvalidKey {
        /// The rejected key, escaped for display and cut to 80 characters.
        key: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// The item (key + value + memcached's per-item overhead) would exceed the
    /// item size limit. mcds checks this before sending, so nothing was
    /// stored and any previous value is intact — unless the server's `-I` is
    /// smaller than the configured limit: memcached then refuses the write
    /// itself and also deletes the key's previous value.
    #[error("{}", too_large_message(.key, .size, .limit))]
    ValueTooLarge {
        /// The key being written.
        key: String,
        /// Bytes the item would take, including per-item overhead (0 when
        /// the server, not mcds, refused the item: its `-I` is smaller than
        /// the configured limit, or it had no memory for the larger item).
        size: usize,
        /// The configured item size limit in bytes.
        limit: usize,
    },

    /// An argument other than the key or value is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// incr/decr found a value that is not a decimal unsigned 64-bit number.
    #[error(
        "cannot increment or decrement key {key}: its value is not a decimal number below 2^64 — delete or reset the key, or use a different name for the counter"
    )]
    NonNumeric {
        /// The key holding the non-numeric value.
        key: String,
    },

    /// A structure read bytes under a key that it cannot decode.
    #[error(
        "corrupt data under key {key}: {reason} — another program may be writing this key; delete or reset it"
    )]
    Corrupt {
        /// The key holding the damaged value.
        key: String,
        /// What the decoder found wrong.
        reason: String,
    },

    /// A read cannot vouch for data under a key: the server holding it
    /// lost items (a restart, `flush_all`, an eviction) since the data
    /// could have been written, so what the read would return may be short
    /// or missing. Nothing is wrong with the bytes themselves; the reason
    /// says from when a read can vouch.
    #[error("data under key {key} may be lost: {reason}")]
    Lost {
        /// The key whose data cannot be vouched for.
        key: String,
        /// What was lost when, and what to do.
        reason: String,
    },

    /// A transport failure before the request was fully sent: it was
    /// definitely not applied and retrying is safe.
    #[error(
        "cannot reach memcached at {server}: {source} — check that the server is running and reachable; the request was not applied, so retrying is safe"
    )]
    Io {
        /// The server address.
        server: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The server is marked down after recent failures; the request was not
    /// sent. The client retries the server after a backoff.
    #[error(
        "memcached at {server} is marked down after a failed connection ({reason}); not retrying for another {retry_in:?} — the request was not applied"
    )]
    ServerDown {
        /// The server address.
        server: String,
        /// Why the last connection attempt failed.
        reason: String,
        /// How long until the client dials again.
        retry_in: Duration,
    },

    /// The deadline passed before the request was fully sent: it was
    /// definitely not applied and retrying is safe.
    #[error(
        "timed out after {after:?} talking to memcached at {server}; the request was not applied — the server may be overloaded or stopped; retry, or raise the timeout"
    )]
    Timeout {
        /// The server address.
        server: String,
        /// The configured timeout.
        after: Duration,
    },

    /// The request was sent but no reply came: it may or may not have been
    /// applied. Retrying a non-idempotent op (incr, append) may apply it
    /// twice.
    #[error(
        "the request for key {key} was sent to {server} but no reply came ({reason}); it may or may not have been applied — re-read the key before retrying a non-idempotent operation"
    )]
    Ambiguous {
        /// The key of the request.
        key: String,
        /// The server address.
        server: String,
        /// What interrupted the reply.
        reason: String,
    },

    /// The store is out of memory and configured not to evict (`memcached
    /// -M`, or `Eviction::Error` on the embedded store). Nothing was stored.
    /// Beware: memcached 1.6 also deletes the key's previous value when it
    /// cannot allocate the new one (in every `ms` mode, even `add`); the
    /// embedded store keeps it.
    #[error(
        "out of memory storing key {key}: the store is full and eviction is disabled — delete data, raise the memory limit (memcached -m), or allow eviction"
    )]
    OutOfMemory {
        /// The key being written.
        key: String,
    },

    /// The server reported an error (`SERVER_ERROR`).
    #[error("memcached at {server} reported an error: {message}")]
    Server {
        /// The server address.
        server: String,
        /// The server's message.
        message: String,
    },

    /// The server's reply could not be understood, or it rejected a command
    /// as malformed. This is a bug in mcds or an incompatible server.
    #[error(
        "protocol error with memcached at {server}: {message} — this is a bug in mcds or an incompatible server; please report it with the server version"
    )]
    Protocol {
        /// The server address.
        server: String,
        /// What was wrong.
        message: String,
    },

    /// A CAS loop lost to concurrent writers too many times in a row.
    #[error(
        "gave up on key {key} after {attempts} attempts lost to concurrent writers — the key is hot; retry later or spread the load over more keys"
    )]
    Conflict {
        /// The contended key.
        key: String,
        /// How many attempts were made.
        attempts: u32,
    },

    /// The backend cannot perform this operation.
    #[error("{op} is not supported by this store ({backend}) — {hint}")]
    Unsupported {
        /// The operation, as the caller named it (`Lock::acquire_async`).
        op: &'static str,
        /// The backend's name, or what about it is missing ("no CAS ids:
        /// memcached started with -C, …").
        backend: &'static str,
        /// What to do instead.
        hint: &'static str,
    },

    /// Something that cannot happen did: a backend answered an operation
    /// with the wrong kind of reply, a worker thread panicked, an encoder
    /// refused its own output. A bug in mcds (or in a third-party backend).
    #[error("internal error: {0} — this is a bug; please report it")]
    Internal(String),

    /// A blocking operation gave up waiting.
    #[error("timed out after {waited:?} waiting for {what} — try again later or wait longer")]
    WaitTimeout {
        /// What was being waited for (e.g. "lock app:deploy").
        what: String,
        /// How long the caller waited.
        waited: Duration,
    },
}

impl Error {
    /// A copy of this error, for reporting one failure to several callers
    /// (every op of a pipelined batch sent to a server that failed). An
    /// [`Io`](Error::Io) source is copied as its kind and message.
    pub fn duplicate(&self) -> Error {
        use Error as E;
        match self {
            E::InvalidKey { key, reason } => E::InvalidKey {
                key: key.clone(),
                reason,
            },
            E::ValueTooLarge { key, size, limit } => E::ValueTooLarge {
                key: key.clone(),
                size: *size,
                limit: *limit,
            },
            E::InvalidArgument(m) => E::InvalidArgument(m.clone()),
            E::NonNumeric { key } => E::NonNumeric { key: key.clone() },
            E::Corrupt { key, reason } => E::Corrupt {
                key: key.clone(),
                reason: reason.clone(),
            },
            E::Lost { key, reason } => E::Lost {
                key: key.clone(),
                reason: reason.clone(),
            },
            E::Io { server, source } => E::Io {
                server: server.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            E::ServerDown {
                server,
                reason,
                retry_in,
            } => E::ServerDown {
                server: server.clone(),
                reason: reason.clone(),
                retry_in: *retry_in,
            },
            E::Timeout { server, after } => E::Timeout {
                server: server.clone(),
                after: *after,
            },
            E::Ambiguous {
                key,
                server,
                reason,
            } => E::Ambiguous {
                key: key.clone(),
                server: server.clone(),
                reason: reason.clone(),
            },
            E::OutOfMemory { key } => E::OutOfMemory { key: key.clone() },
            E::Server { server, message } => E::Server {
                server: server.clone(),
                message: message.clone(),
            },
            E::Protocol { server, message } => E::Protocol {
                server: server.clone(),
                message: message.clone(),
            },
            E::Conflict { key, attempts } => E::Conflict {
                key: key.clone(),
                attempts: *attempts,
            },
            E::Unsupported { op, backend, hint } => E::Unsupported { op, backend, hint },
            E::Internal(m) => E::Internal(m.clone()),
            E::WaitTimeout { what, waited } => E::WaitTimeout {
                what: what.clone(),
                waited: *waited,
            },
        }
    }

    /// Whether the request was definitely not applied, so the same call can
    /// be retried safely (transport failures before sending, timeouts before
    /// sending, a server marked down).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::Io { .. } | Error::Timeout { .. } | Error::ServerDown { .. }
        )
    }

    /// Whether the outcome is unknown: the request may have been applied.
    pub fn is_ambiguous(&self) -> bool {
        matches!(self, Error::Ambiguous { .. })
    }

    /// Whether the error is about the caller's input (key, value size,
    /// argument) rather than the store or the network.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidKey { .. } | Error::ValueTooLarge { .. } | Error::InvalidArgument(_)
        )
    }
}

/// `Result` with mcds's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Render bytes for an error message: printable ASCII as is, everything else
/// escaped, cut to 80 characters.
pub(crate) fn display_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            if out.len() > 80 {
                break;
            }
            out.extend(ch.escape_debug());
        }
        for b in chunk.invalid() {
            if out.len() > 80 {
                break;
            }
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    if out.len() > 80 {
        out.push_str("...");
    }
    out.push('"');
    out
}

/// The message of [`Error::ValueTooLarge`]: `size` 0 is the server's own
/// refusal of an item that fits the configured limit.
fn too_large_message(key: &str, size: &usize, limit: &usize) -> String {
    if *size == 0 {
        format!(
            "value too large for key {key}: the server refused to store or grow the item although it fits the configured item limit of {limit} bytes — the server's -I is smaller (set the store's item size limit to the server's -I, or raise -I), or it has no memory for an item this large (memcached -m); store less per key"
        )
    } else {
        format!(
            "value too large for key {key}: the item would take {size} bytes but the item limit is {limit} bytes — store less per key (split or shard the value) or raise the limit (memcached -I, MemoryStore::builder().item_size_limit)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_bytes_escapes_and_truncates() {
        assert_eq!(display_bytes(b"a\r\nb"), r#""a\r\nb""#);
        assert_eq!(display_bytes(b"\xff"), r#""\xff""#);
        let long = display_bytes(&[b'x'; 300]);
        assert!(long.len() < 100, "{long}");
        assert!(long.ends_with("...\""));
    }

    #[test]
    fn messages_say_what_to_do() {
        let e = Error::InvalidKey {
            key: display_bytes(b"a b"),
            reason: "contains a space",
        };
        let text = e.to_string();
        assert!(
            text.contains("contains a space") && text.contains("encode"),
            "{text}"
        );
        assert!(
            Error::Timeout {
                server: "x".into(),
                after: Duration::from_secs(1)
            }
            .is_retryable()
        );
    }
}
