//! memcached's ASCII authentication (`-Y`): the user and password
//! ([`Credentials`]), and what a server that wants them answers.

use std::fmt;
use std::io;

use mcds_core::{Error, Result};

use super::denied;

/// A user and password for memcached's ASCII authentication (`-Y`).
///
/// The password is kept out of every message and of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub(super) user: String,
    pub(super) password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The environment variables [`Credentials::from_env`] reads.
pub const USERNAME_VAR: &str = "MCDS_USERNAME";
/// See [`USERNAME_VAR`].
pub const PASSWORD_VAR: &str = "MCDS_PASSWORD";

impl Credentials {
    /// A user and password as listed in memcached's auth file
    /// (`user:password` lines). The user may not contain a space, a colon or
    /// a line break, the password no space or line break: memcached 1.6.18
    /// refuses a password with a space even when its auth file lists it.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Result<Credentials> {
        let (user, password) = (user.into(), password.into());
        if user.is_empty() || user.contains([' ', ':', '\r', '\n', '\0']) {
            return Err(Error::InvalidArgument(format!(
                "invalid memcached user {user:?}: it must be non-empty, without spaces, colons or line breaks"
            )));
        }
        if password.is_empty() || password.contains([' ', '\r', '\n', '\0']) {
            return Err(Error::InvalidArgument(
                "invalid memcached password: it must be non-empty, without spaces or line breaks (memcached's ASCII auth cannot carry them; the password itself is not shown)".into(),
            ));
        }
        Ok(Credentials { user, password })
    }

    /// The credentials in `MCDS_USERNAME` and `MCDS_PASSWORD`, if both are
    /// set (`None` if neither is; an error if only one is, or either is
    /// invalid).
    pub fn from_env() -> Result<Option<Credentials>> {
        let user = std::env::var(USERNAME_VAR).ok();
        let password = std::env::var(PASSWORD_VAR).ok();
        match (user, password) {
            (None, None) => Ok(None),
            (Some(user), Some(password)) => Credentials::new(user, password).map(Some),
            _ => Err(Error::InvalidArgument(format!(
                "set both {USERNAME_VAR} and {PASSWORD_VAR} for memcached's authentication, or neither"
            ))),
        }
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }
}

/// A server that wants credentials answers everything else with this line.
pub const UNAUTHENTICATED: &str = "CLIENT_ERROR unauthenticated";

/// The error for a server that answered [`UNAUTHENTICATED`].
pub fn needs_credentials(server: &str) -> io::Error {
    denied(format!(
        "memcached at {server} requires authentication (-Y): give a user and password (user:password@ in the URL, or {USERNAME_VAR}/{PASSWORD_VAR})"
    ))
}
