//! Result codes: the `MCDS_…` constants (cbindgen writes them to the header
//! as `#define`s) and [`RESULTS`], the one table of `(code, name, kind)`
//! rows that [`code_of`], [`mcds_result_name`] and the tests read.
//!
//! Adding a code is two lines: its constant and its row.

use std::ffi::{CStr, c_char};

use ::mcds_core::Error;

/// A result code: `MCDS_OK` or one of the `MCDS_…` error codes.
pub type mcds_result = u32;

/// Success.
pub const MCDS_OK: mcds_result = 0;
/// A required pointer argument was NULL.
pub const MCDS_NULL_ARGUMENT: mcds_result = 1;
/// A name was not valid UTF-8.
pub const MCDS_INVALID_UTF8: mcds_result = 2;
/// mcds panicked (a bug); the call had no effect on its outputs.
pub const MCDS_PANIC: mcds_result = 3;
/// mcds found a bug in itself without panicking (a reply of the wrong kind,
/// say); please report it with the message.
pub const MCDS_INTERNAL: mcds_result = 4;
/// A callback the caller passed in (the loader of `mcds_view_counter_view`)
/// returned a code other than `MCDS_OK`; the message names that code. The
/// call had no effect.
pub const MCDS_CALLBACK_FAILED: mcds_result = 5;
/// The call was cancelled through its thread's `mcds_cancel` token
/// (`mcds_cancel_trigger`) while it waited: it stopped waiting, and a write
/// it made may have been applied (as with `MCDS_AMBIGUOUS`).
pub const MCDS_CANCELLED: mcds_result = 6;
/// The key (built from a name) is empty, too long or has spaces or control bytes.
pub const MCDS_INVALID_KEY: mcds_result = 100;
/// The value would exceed the item size limit.
pub const MCDS_VALUE_TOO_LARGE: mcds_result = 101;
/// An argument is out of range (a TTL of 0, say) or the call does not fit the handle's state.
pub const MCDS_INVALID_ARGUMENT: mcds_result = 102;
/// incr/decr found a value that is not a number.
pub const MCDS_NON_NUMERIC: mcds_result = 103;
/// Stored bytes could not be decoded.
pub const MCDS_CORRUPT: mcds_result = 104;
/// A read cannot vouch for the data: its server lost items (a restart, a
/// flush, an eviction) since it could have been written.
pub const MCDS_LOST: mcds_result = 105;
/// The server could not be reached; the request was not applied.
pub const MCDS_IO: mcds_result = 200;
/// The server is marked down after a failed connection; not applied.
pub const MCDS_SERVER_DOWN: mcds_result = 201;
/// The server did not answer in time; the request was not applied.
/// Renamed after 0.1: this code was `MCDS_IO_TIMEOUT`, and `MCDS_TIMEOUT`
/// was 302 (now `MCDS_WAIT_TIMEOUT`).
pub const MCDS_TIMEOUT: mcds_result = 202;
/// The request was sent but no reply came: it may have been applied.
pub const MCDS_AMBIGUOUS: mcds_result = 203;
/// The server is out of memory and does not evict.
pub const MCDS_OUT_OF_MEMORY: mcds_result = 204;
/// The server reported an error.
pub const MCDS_SERVER_ERROR: mcds_result = 205;
/// The server's reply could not be understood.
pub const MCDS_PROTOCOL: mcds_result = 206;
/// A CAS loop kept losing to concurrent writers.
pub const MCDS_CONFLICT: mcds_result = 300;
/// The backend does not support the operation.
pub const MCDS_UNSUPPORTED: mcds_result = 301;
/// A blocking call (lock acquire) gave up waiting.
/// Renamed after 0.1: this code was `MCDS_TIMEOUT`, a name now given to 202.
pub const MCDS_WAIT_TIMEOUT: mcds_result = 302;
/// An error this version of the header does not know (a newer libmcds).
pub const MCDS_OTHER: mcds_result = 999;

/// What a row's code stands for.
#[derive(Clone, Copy)]
enum Kind {
    /// A code of the C boundary itself, which no [`Error`] maps to: success,
    /// a NULL or non-UTF-8 argument, a panic, a caller's callback that failed,
    /// a call cancelled through its token.
    Boundary,
    /// The code of the [`Error`]s this classifier accepts: exactly one
    /// variant, named in the row (see [`row!`]).
    Error(fn(&Error) -> bool),
    /// The code of an [`Error`] that no row claims (a variant newer than
    /// this table; the tests keep that from happening).
    Unclaimed,
}

/// A row of [`RESULTS`]: `row!(MCDS_X)` for a boundary code,
/// `row!(MCDS_X, Variant)` for the code of `Error::Variant`,
/// `row!(MCDS_X, unclaimed)` for the fallback. The name is the constant's,
/// so the two cannot disagree.
macro_rules! row {
    ($code:ident) => {
        ($code, name!($code), Kind::Boundary)
    };
    ($code:ident, unclaimed) => {
        ($code, name!($code), Kind::Unclaimed)
    };
    ($code:ident, $variant:ident) => {
        (
            $code,
            name!($code),
            Kind::Error(|e| matches!(e, Error::$variant { .. })),
        )
    };
}

/// The C string spelling the constant `$code`.
macro_rules! name {
    ($code:ident) => {
        match CStr::from_bytes_with_nul(concat!(stringify!($code), "\0").as_bytes()) {
            Ok(name) => name,
            Err(_) => panic!("a constant's name has no NUL"),
        }
    };
}

/// Every result code: its value, its name, and what it stands for. The
/// codes group by hundreds: 0xx the call itself, 1xx the input or the
/// stored data, 2xx the transport and the server, 3xx contention and
/// capabilities.
const RESULTS: &[(mcds_result, &CStr, Kind)] = &[
    row!(MCDS_OK),
    row!(MCDS_NULL_ARGUMENT),
    row!(MCDS_INVALID_UTF8),
    row!(MCDS_PANIC),
    row!(MCDS_INTERNAL, Internal),
    row!(MCDS_CALLBACK_FAILED),
    row!(MCDS_CANCELLED),
    row!(MCDS_INVALID_KEY, InvalidKey),
    row!(MCDS_VALUE_TOO_LARGE, ValueTooLarge),
    row!(MCDS_INVALID_ARGUMENT, InvalidArgument),
    row!(MCDS_NON_NUMERIC, NonNumeric),
    row!(MCDS_CORRUPT, Corrupt),
    row!(MCDS_LOST, Lost),
    row!(MCDS_IO, Io),
    row!(MCDS_SERVER_DOWN, ServerDown),
    row!(MCDS_TIMEOUT, Timeout),
    row!(MCDS_AMBIGUOUS, Ambiguous),
    row!(MCDS_OUT_OF_MEMORY, OutOfMemory),
    row!(MCDS_SERVER_ERROR, Server),
    row!(MCDS_PROTOCOL, Protocol),
    row!(MCDS_CONFLICT, Conflict),
    row!(MCDS_UNSUPPORTED, Unsupported),
    row!(MCDS_WAIT_TIMEOUT, WaitTimeout),
    row!(MCDS_OTHER, unclaimed),
];

/// The code of an error: the row whose classifier accepts it, else
/// `MCDS_OTHER`.
pub(crate) fn code_of(e: &Error) -> mcds_result {
    RESULTS
        .iter()
        .find(|(_, _, kind)| matches!(kind, Kind::Error(is) if is(e)))
        .map_or(MCDS_OTHER, |&(code, _, _)| code)
}

/// The name of a result code, e.g. `"MCDS_INVALID_KEY"`: a static string
/// that must not be freed. Unknown codes give `"MCDS_UNKNOWN"`.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_result_name(result: mcds_result) -> *const c_char {
    RESULTS
        .iter()
        .find(|&&(code, _, _)| code == result)
        .map_or(c"MCDS_UNKNOWN", |&(_, name, _)| name)
        .as_ptr()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;

    fn name_of(code: mcds_result) -> String {
        // SAFETY: mcds_result_name returns a static C string.
        unsafe { CStr::from_ptr(mcds_result_name(code)) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn result_names_are_distinct() {
        let codes: BTreeSet<mcds_result> = RESULTS.iter().map(|r| r.0).collect();
        assert_eq!(codes.len(), RESULTS.len(), "a code has two rows");
        let names: BTreeSet<String> = RESULTS.iter().map(|r| name_of(r.0)).collect();
        assert_eq!(names.len(), RESULTS.len(), "two codes share a name");
        for &(code, name, _) in RESULTS {
            assert_eq!(name_of(code), name.to_str().unwrap());
            assert!(name_of(code).starts_with("MCDS_"));
        }
        assert!(!names.contains("MCDS_UNKNOWN"));
        assert_eq!(name_of(7), "MCDS_UNKNOWN");
        assert_eq!(name_of(MCDS_CANCELLED), "MCDS_CANCELLED");
        assert_eq!(name_of(MCDS_CALLBACK_FAILED), "MCDS_CALLBACK_FAILED");
        assert_eq!(name_of(MCDS_TIMEOUT), "MCDS_TIMEOUT");
        assert_eq!(name_of(MCDS_WAIT_TIMEOUT), "MCDS_WAIT_TIMEOUT");
    }

    /// One value of every variant of [`Error`].
    fn one_of_each() -> Vec<Error> {
        let (server, key, text) = (String::from("s"), String::from("k"), String::from("x"));
        let secs = Duration::from_secs(1);
        vec![
            Error::InvalidKey {
                key: key.clone(),
                reason: "r",
            },
            Error::ValueTooLarge {
                key: key.clone(),
                size: 2,
                limit: 1,
            },
            Error::InvalidArgument(text.clone()),
            Error::NonNumeric { key: key.clone() },
            Error::Corrupt {
                key: key.clone(),
                reason: text.clone(),
            },
            Error::Lost {
                key: key.clone(),
                reason: text.clone(),
            },
            Error::Io {
                server: server.clone(),
                source: std::io::ErrorKind::ConnectionRefused.into(),
            },
            Error::ServerDown {
                server: server.clone(),
                reason: text.clone(),
                retry_in: secs,
            },
            Error::Timeout {
                server: server.clone(),
                after: secs,
            },
            Error::Ambiguous {
                key: key.clone(),
                server: server.clone(),
                reason: text.clone(),
            },
            Error::OutOfMemory { key: key.clone() },
            Error::Server {
                server: server.clone(),
                message: text.clone(),
            },
            Error::Protocol {
                server,
                message: text.clone(),
            },
            Error::Conflict { key, attempts: 3 },
            Error::Unsupported {
                op: "op",
                backend: "b",
                hint: "h",
            },
            Error::Internal(text.clone()),
            Error::WaitTimeout {
                what: text,
                waited: secs,
            },
        ]
    }

    /// `InvalidKey { .. }` → `"InvalidKey"`.
    fn variant_name(e: &Error) -> String {
        format!("{e:?}")
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect()
    }

    #[test]
    fn every_error_has_exactly_one_row() {
        let errors = one_of_each();
        let mut claimed = BTreeSet::new();
        for e in &errors {
            let rows: Vec<&str> = RESULTS
                .iter()
                .filter(|(_, _, kind)| matches!(kind, Kind::Error(is) if is(e)))
                .map(|(_, name, _)| name.to_str().unwrap())
                .collect();
            assert_eq!(rows.len(), 1, "{} has rows {rows:?}", variant_name(e));
            assert_ne!(code_of(e), MCDS_OTHER);
            claimed.insert(code_of(e));
        }
        // Every `Error` row claims a variant, so `errors` lists them all.
        let error_rows = RESULTS
            .iter()
            .filter(|(_, _, kind)| matches!(kind, Kind::Error(_)))
            .count();
        assert_eq!(claimed.len(), error_rows);
        assert_eq!(claimed.len(), errors.len());
        // The fallback is MCDS_OTHER, and only it.
        let unclaimed: Vec<mcds_result> = RESULTS
            .iter()
            .filter(|(_, _, kind)| matches!(kind, Kind::Unclaimed))
            .map(|r| r.0)
            .collect();
        assert_eq!(unclaimed, [MCDS_OTHER]);
    }

    #[test]
    fn rust_and_c_names_line_up() {
        let code = |name: &str| {
            let e = one_of_each()
                .into_iter()
                .find(|e| variant_name(e) == name)
                .unwrap();
            code_of(&e)
        };
        assert_eq!(code("Timeout"), MCDS_TIMEOUT);
        assert_eq!(code("WaitTimeout"), MCDS_WAIT_TIMEOUT);
        assert_eq!(code("Internal"), MCDS_INTERNAL);
        assert_eq!(
            (MCDS_TIMEOUT, MCDS_WAIT_TIMEOUT, MCDS_INTERNAL),
            (202, 302, 4)
        );
    }

    /// `Error` is `#[non_exhaustive]`, so no `match` here can notice a new
    /// variant: read the variants off mcds-core's source instead, and require
    /// [`one_of_each`] (and so the table) to cover them.
    #[test]
    fn the_samples_cover_every_variant_of_error() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../crates/mcds-core/src/error.rs"
        );
        let source = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {path} (where mcds_core::Error lives): {e}"));
        let body = source
            .split_once("pub enum Error {")
            .and_then(|(_, rest)| rest.split_once("\n}"))
            .unwrap_or_else(|| panic!("no `pub enum Error {{ … }}` in {path}"))
            .0;
        // Variants are the lines indented once that start with a capital.
        let declared: BTreeSet<String> = body
            .lines()
            .filter_map(|line| line.strip_prefix("    "))
            .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
            .map(|line| {
                line.chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect()
            })
            .collect();
        let sampled: BTreeSet<String> = one_of_each().iter().map(variant_name).collect();
        assert!(
            declared.len() >= 16,
            "parsed too few variants: {declared:?}"
        );
        assert_eq!(
            declared, sampled,
            "mcds_core::Error changed: give each variant a value in one_of_each() and a row in RESULTS"
        );
    }
}
