//! What a store holds and answers: the [`Item`], the outcomes of
//! conditional writes, counter parsing, and item size limits.

use crate::error::{Error, Result};
use crate::key::Key;

/// A stored item as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The value bytes.
    pub value: Vec<u8>,
    /// The client flags stored with the item (mcds writes 0).
    pub flags: u32,
    /// The item's CAS id: changes on every modification.
    pub cas: u64,
}

impl Item {
    /// The value read as a memcached counter, the way memcached's incr reads
    /// it: optional leading whitespace, decimal digits, optional trailing
    /// whitespace. A counter that `decr` made shorter is space-padded by
    /// memcached (`"9 "`) and still reads as 9. `None` if not a number.
    pub fn counter(&self) -> Option<u64> {
        parse_counter(&self.value)
    }
}

/// Outcome of [`Store::add`](crate::Store::add) and [`Store::replace`](crate::Store::replace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored; the new CAS id.
    Stored(u64),
    /// Not stored: for `add` the key exists, for `replace` it does not.
    NotStored,
}

impl Stored {
    /// Whether the value was stored.
    pub fn is_stored(self) -> bool {
        matches!(self, Stored::Stored(_))
    }
}

/// Outcome of [`Store::cas`](crate::Store::cas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CasOutcome {
    /// Stored; the new CAS id.
    Stored(u64),
    /// The item changed since the CAS id was read; nothing was stored.
    Exists,
    /// The item does not exist (any more); nothing was stored.
    NotFound,
}

/// Outcome of [`Store::delete_cas`](crate::Store::delete_cas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The item matched and was deleted.
    Deleted,
    /// The item changed since the CAS id was read; it was kept.
    Exists,
    /// The item does not exist.
    NotFound,
}

/// Outcome of [`Store::update`](crate::Store::update).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Updated {
    /// The new value was stored with this CAS id.
    Stored {
        /// The stored value.
        value: Vec<u8>,
        /// Its CAS id.
        cas: u64,
    },
    /// The update function declined to change anything.
    Unchanged,
}

/// Parse a counter value exactly as memcached's incr does (`strtoull` with
/// its checks): optional leading whitespace, an optional sign, decimal
/// digits, then whitespace, a NUL or the end. Out of range, empty or
/// trailing junk is `None`. A result that is negative as a signed 64-bit
/// number is refused when the text holds a `-` (so `"-0"` is 0 but `"-5"`
/// is refused), as in memcached.
pub fn parse_counter(bytes: &[u8]) -> Option<u64> {
    // What a counter holds after an incr or decr first: 1 to 19 digits
    // (too few to overflow), then nothing or the spaces of a shortened
    // number. Read with no checks to make.
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if (1..=19).contains(&digits) && bytes[digits..].iter().all(|&b| b == b' ') {
        return Some(
            bytes[..digits]
                .iter()
                .fold(0, |n, &b| n * 10 + u64::from(b - b'0')),
        );
    }
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let mut i = bytes.iter().position(|&b| !is_space(b))?;
    let negative = match bytes[i] {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_start = i;
    let mut value: u64 = 0;
    while let Some(&b) = bytes.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    // strtoull stops at a NUL as at the end of a C string.
    if let Some(&b) = bytes.get(i)
        && !is_space(b)
        && b != 0
    {
        return None;
    }
    let value = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    // memcached then refuses a result that is negative as a signed number
    // if the string holds a '-' anywhere (before its first NUL).
    let c_string = bytes.split(|&b| b == 0).next().unwrap_or_default();
    if (value as i64) < 0 && c_string.contains(&b'-') {
        return None;
    }
    Some(value)
}

/// Bytes memcached 1.6 adds to every item on top of key and value (item
/// header, CAS, key terminator, value CRLF), measured on 1.6.18 with `-I 1m`:
/// the largest storable value is `item_size_limit - key.len() - 59`.
pub const ITEM_OVERHEAD: usize = 59;

/// memcached's default item size limit (`-I 1m`).
pub const DEFAULT_ITEM_SIZE_LIMIT: usize = 1024 * 1024;

/// The bytes an item occupies, as memcached accounts for them.
pub fn item_size(key_len: usize, value_len: usize) -> usize {
    key_len + value_len + ITEM_OVERHEAD
}

/// The [`item_size`] of `key` with a value of `value_len` bytes, or
/// [`Error::ValueTooLarge`] if it exceeds `limit`: the check every backend
/// (and any structure that must refuse a value before writing anything else)
/// makes.
pub fn check_item_size(key: &Key, value_len: usize, limit: usize) -> Result<usize> {
    let size = item_size(key.len(), value_len);
    if size > limit {
        return Err(Error::ValueTooLarge {
            key: key.display(),
            size,
            limit,
        });
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_parsing_matches_memcached() {
        let cases: &[(&[u8], Option<u64>)] = &[
            (b"0", Some(0)),
            (b"42", Some(42)),
            (b"9 ", Some(9)),
            (b" 7", Some(7)),
            (b"+3", Some(3)),
            (b"-0", Some(0)),
            (b"-5", None),
            (b"18446744073709551615", Some(u64::MAX)),
            (b"18446744073709551616", None),
            (b"12abc", None),
            (b"12 34", Some(12)),
            (b"", None),
            (b"   ", None),
            (b"abc", None),
            (b"-", None),
            (b"0\0junk", Some(0)),
            (b"\x0b5", Some(5)),
            (b"18446744073709551615 -", None),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse_counter(input),
                *want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
