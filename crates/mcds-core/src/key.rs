//! Validated memcached keys.

use std::fmt;

use crate::error::{Error, Result, display_bytes};

/// The longest key memcached accepts, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// A memcached key, validated when it is built.
///
/// A key is 1..=250 bytes and contains no ASCII whitespace or control bytes
/// (0x00–0x20 and 0x7f). Bytes ≥ 0x80 (UTF-8) are allowed. Because every
/// [`Store`](crate::Store) operation takes a `&Key`, a key that could inject a
/// command into memcached's text protocol (`"x\r\nflush_all"`) cannot reach a
/// server: it is an [`Error::InvalidKey`] at construction.
///
/// Structures build keys as `<prefix><kind>:<name>:<part>` with
/// [`Key::parts`]; a name that would make the key too long is an error, never
/// silently truncated.
///
/// ```
/// use mcds_core::Key;
///
/// let k = Key::new("user:42")?;
/// assert_eq!(k.as_bytes(), b"user:42");
/// assert!(Key::new("x\r\nflush_all").is_err());
/// assert!(Key::new("").is_err());
///
/// let part = Key::parts("app/", "counter", "hits", "0")?;
/// assert_eq!(part.as_bytes(), b"app/counter:hits:0");
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(Box<[u8]>);

impl Key {
    /// Validate `bytes` as a key.
    pub fn new(bytes: impl AsRef<[u8]>) -> Result<Key> {
        let bytes = bytes.as_ref();
        validate(bytes)?;
        Ok(Key(bytes.into()))
    }

    /// Build `<prefix><kind>:<name>:<part>` and validate it. An empty `name`
    /// is refused too: every structure needs a name.
    ///
    /// The name is escaped ([`escape_name`]: `%` and `:` become `%25` and
    /// `%3A`). The name part then never contains the separator, so two
    /// different (kind, name, part) never give the same key: table
    /// `users:v:admin`'s member list and table `users`'s member
    /// `admin:members` are different keys. Any other name is used as it is.
    pub fn parts(prefix: &str, kind: &str, name: &str, part: impl fmt::Display) -> Result<Key> {
        let key = format!("{prefix}{kind}:{}:{part}", escape_name(name));
        if name.is_empty() {
            return Err(Error::InvalidKey {
                key: display_bytes(key.as_bytes()),
                reason: "the structure name is empty",
            });
        }
        Key::new(key)
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The key's length in bytes (1..=250).
    #[allow(clippy::len_without_is_empty)] // a Key is never empty
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// This key with `suffix` appended, validated.
    pub fn with_suffix(&self, suffix: impl AsRef<[u8]>) -> Result<Key> {
        let suffix = suffix.as_ref();
        let mut bytes = Vec::with_capacity(self.0.len() + suffix.len());
        bytes.extend_from_slice(&self.0);
        bytes.extend_from_slice(suffix);
        // This key is valid already: its bytes are not checked again (a
        // structure makes a key per member this way, 100,000 for a
        // `CounterMap::get_all`), and the buffer becomes the key without
        // a copy. The whole key is checked for the error only.
        if bytes.len() > MAX_KEY_LEN || !suffix.iter().all(|&b| is_key_byte(b)) {
            validate(&bytes)?;
        }
        Ok(Key(bytes.into_boxed_slice()))
    }

    /// The key rendered for messages: printable bytes as they are, others
    /// escaped.
    pub fn display(&self) -> String {
        display_bytes(&self.0)
    }
}

/// A structure name as it appears in its keys: `%` as `%25` and `:` (the
/// separator of [`Key::parts`]) as `%3A`; everything else as it is (a name
/// with bytes a key cannot hold, such as spaces, is still refused by
/// [`Key::new`]). Injective, and the result never contains `:`.
///
/// ```
/// use mcds_core::escape_name;
///
/// assert_eq!(escape_name("hits"), "hits");
/// assert_eq!(escape_name("users:v:admin"), "users%3Av%3Aadmin");
/// assert_eq!(escape_name("50%"), "50%25");
/// ```
pub fn escape_name(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.contains(['%', ':']) {
        return std::borrow::Cow::Borrowed(name);
    }
    std::borrow::Cow::Owned(name.replace('%', "%25").replace(':', "%3A"))
}

/// Whether `byte` may appear in a key: not ASCII whitespace, not a control
/// byte, not DEL.
pub fn is_key_byte(byte: u8) -> bool {
    byte > 0x20 && byte != 0x7f
}

fn validate(bytes: &[u8]) -> Result<()> {
    let reason = if bytes.is_empty() {
        "it is empty"
    } else if bytes.len() > MAX_KEY_LEN {
        "it is longer than 250 bytes"
    } else if let Some(&bad) = bytes.iter().find(|&&b| !is_key_byte(b)) {
        match bad {
            b' ' => "it contains a space",
            b'\r' | b'\n' => "it contains a line break",
            b'\t' => "it contains a tab",
            0 => "it contains a NUL byte",
            0x7f => "it contains DEL (0x7f)",
            _ => "it contains a control byte",
        }
    } else {
        return Ok(());
    };
    Err(Error::InvalidKey {
        key: display_bytes(bytes),
        reason,
    })
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.display())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl AsRef<[u8]> for Key {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl TryFrom<&str> for Key {
    type Error = Error;
    fn try_from(value: &str) -> Result<Key> {
        Key::new(value)
    }
}

impl TryFrom<String> for Key {
    type Error = Error;
    fn try_from(value: String) -> Result<Key> {
        Key::new(value)
    }
}

impl TryFrom<&[u8]> for Key {
    type Error = Error;
    fn try_from(value: &[u8]) -> Result<Key> {
        Key::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_printable_and_utf8() {
        for ok in [
            "a",
            "user:1",
            "ключ",
            "キー",
            "키",
            "~!@#$%^&*()_+{}|:\"<>?",
        ] {
            assert!(Key::new(ok).is_ok(), "{ok}");
        }
        assert!(Key::new([b'k'; 250]).is_ok());
    }

    #[test]
    fn rejects_every_forbidden_byte() {
        for b in (0u8..=0x20).chain([0x7f]) {
            let err = Key::new([b'a', b, b'b']).unwrap_err();
            assert!(matches!(err, Error::InvalidKey { .. }), "{b:#x}");
        }
        assert!(Key::new([b'k'; 251]).is_err());
        assert!(Key::new("").is_err());
        assert!(Key::parts("p", "kind", &"n".repeat(250), 0).is_err());
    }

    #[test]
    fn injection_is_rejected_with_a_clear_reason() {
        let err = Key::new("x\r\nflush_all").unwrap_err().to_string();
        assert!(err.contains("line break"), "{err}");
        assert!(err.contains(r"x\r\nflush_all"), "{err}");
    }
}
