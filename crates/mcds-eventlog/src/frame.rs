//! The event frame codec: self-delimiting, checksummed frames that can be
//! appended to one another.
//!
//! A frame is
//!
//! | bytes | field |
//! |---|---|
//! | 1 | magic `0xE7` |
//! | 8 | timestamp, Unix milliseconds, little-endian |
//! | 4 | payload length, little-endian |
//! | 4 | header check: low 32 bits of XXH3-64 of the 12 bytes above |
//! | n | payload |
//! | 4 | payload check: low 32 bits of XXH3-64 of the payload |
//!
//! so 21 bytes of overhead per event. Appends of whole frames are atomic in
//! memcached, so a log is a plain concatenation. [`scan`] checks every
//! frame; a damaged or truncated one is skipped by scanning forward for the
//! next frame whose header check holds, and counted. It never panics and
//! never returns an event whose bytes were damaged (up to the 2^-32 chance of
//! a checksum collision).
//!
//! The module is private; `mcds-fuzz` reaches it through the `fuzzing`
//! feature. The example of these docs is the unit test `module_example`.

use mcds_core::{UnixMs, stable_hash};

/// The first byte of every frame.
pub const MAGIC: u8 = 0xE7;
/// Bytes before the payload.
pub const HEADER: usize = 17;
/// Bytes after the payload.
pub const TRAILER: usize = 4;

/// One event: when it happened and what it says.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// Unix milliseconds.
    pub at_ms: UnixMs,
    /// The application's bytes.
    pub payload: Vec<u8>,
}

/// The result of [`decode`].
#[cfg(any(test, feature = "fuzzing"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The intact frames, in log order.
    pub events: Vec<Event>,
    /// Bytes skipped because they were not part of an intact frame.
    pub damaged_bytes: usize,
}

fn check(bytes: &[u8]) -> [u8; 4] {
    (stable_hash(bytes) as u32).to_le_bytes()
}

/// The encoded size of a frame with `payload_len` bytes of payload.
pub fn frame_len(payload_len: usize) -> usize {
    HEADER + payload_len + TRAILER
}

/// Append the frame for (`at_ms`, `payload`) to `out`. Payloads over 4 GiB
/// cannot be framed (and never fit a memcached item anyway); they are cut to
/// `u32::MAX` bytes, which the store then refuses as too large.
pub fn encode(at_ms: UnixMs, payload: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let payload = &payload[..len as usize];
    let start = out.len();
    out.reserve(frame_len(payload.len()));
    out.push(MAGIC);
    out.extend_from_slice(&at_ms.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    let header_check = check(&out[start..start + 13]);
    out.extend_from_slice(&header_check);
    out.extend_from_slice(payload);
    out.extend_from_slice(&check(payload));
}

/// Try to read one intact frame at the start of `bytes`: its timestamp,
/// its payload (borrowed) and its length.
fn frame_at(bytes: &[u8]) -> Option<(u64, &[u8], usize)> {
    let header = bytes.get(..HEADER)?;
    if header[0] != MAGIC || header[13..17] != check(&header[..13]) {
        return None;
    }
    let at_ms = u64::from_le_bytes(header[1..9].try_into().ok()?);
    let len = u32::from_le_bytes(header[9..13].try_into().ok()?) as usize;
    let end = HEADER.checked_add(len)?;
    let payload = bytes.get(HEADER..end)?;
    let trailer = bytes.get(end..end.checked_add(TRAILER)?)?;
    if trailer != check(payload) {
        return None;
    }
    Some((at_ms, payload, end + TRAILER))
}

/// Walk a concatenation of frames, calling `visit(at_ms, payload)` for
/// every intact one in log order, without copying payloads; the number of
/// damaged bytes skipped (see the module docs).
pub fn scan(bytes: &[u8], mut visit: impl FnMut(u64, &[u8])) -> usize {
    let mut damaged = 0;
    let mut i = 0;
    while i < bytes.len() {
        match frame_at(&bytes[i..]) {
            Some((at_ms, payload, len)) => {
                visit(at_ms, payload);
                i += len;
            }
            None => {
                // Resynchronise at the next magic byte.
                let skip = bytes[i + 1..]
                    .iter()
                    .position(|&b| b == MAGIC)
                    .map_or(bytes.len() - i, |p| p + 1);
                damaged += skip;
                i += skip;
            }
        }
    }
    damaged
}

/// Decode a concatenation of frames, skipping (and counting) damage: the
/// events of `scan`, copied out (the fuzz harnesses' and tests' view;
/// the log itself scans).
#[cfg(any(test, feature = "fuzzing"))]
pub fn decode(bytes: &[u8]) -> Decoded {
    let mut events = Vec::new();
    let damaged_bytes = scan(bytes, |at_ms, payload| {
        events.push(Event {
            at_ms,
            payload: payload.to_vec(),
        })
    });
    Decoded {
        events,
        damaged_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_example() {
        let mut log = Vec::new();
        encode(1_700_000_000_000, b"login ann", &mut log);
        encode(1_700_000_000_250, b"logout ann", &mut log);
        let decoded = decode(&log);
        assert_eq!(decoded.events.len(), 2);
        assert_eq!(decoded.damaged_bytes, 0);
        // A cut-off tail is detected, not misread.
        let cut = decode(&log[..log.len() - 3]);
        assert_eq!(
            (cut.events.len(), cut.damaged_bytes),
            (1, log.len() - 3 - 30)
        );
    }

    #[test]
    fn round_trip_and_damage() {
        let mut log = Vec::new();
        for i in 0..10u64 {
            encode(i, &vec![MAGIC; i as usize * 7], &mut log);
        }
        let d = decode(&log);
        assert_eq!(d.events.len(), 10);
        assert_eq!(d.damaged_bytes, 0);
        // Flip one payload byte of the 4th frame: only that frame is lost.
        let mut bad = log.clone();
        let fourth: usize = (0..3).map(|i| frame_len(i * 7)).sum();
        bad[fourth + HEADER + 1] ^= 1;
        let d = decode(&bad);
        assert_eq!(d.events.len(), 9);
        assert_eq!(d.damaged_bytes, frame_len(21));
        assert!(d.events.iter().all(|e| e.at_ms != 3));
        // Garbage in front and a torn tail.
        let mut noisy = b"garbage\xe7\xe7".to_vec();
        noisy.extend_from_slice(&log);
        noisy.extend_from_slice(&log[..5]);
        let d = decode(&noisy);
        assert_eq!(d.events.len(), 10);
        assert_eq!(d.damaged_bytes, 9 + 5);
    }
}
