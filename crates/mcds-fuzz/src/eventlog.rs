//! The event frame codec (`mcds-eventlog`): target `event_frames`.

use mcds_eventlog::fuzzing::frame;

/// The event frame codec.
pub fn event_frames(data: &[u8]) {
    // Arbitrary bytes: no panic; everything is an event or counted damage.
    let decoded = frame::decode(data);
    let used: usize = decoded
        .events
        .iter()
        .map(|e| frame::frame_len(e.payload.len()))
        .sum();
    assert_eq!(used + decoded.damaged_bytes, data.len());
    // Structured: events (8-byte timestamp, length byte, payload).
    let mut events = Vec::new();
    let mut i = 0;
    while i + 9 <= data.len() {
        let at_ms = u64::from_le_bytes(data[i..i + 8].try_into().unwrap_or_default());
        let len = usize::from(data[i + 8]);
        let end = (i + 9 + len).min(data.len());
        events.push(frame::Event {
            at_ms,
            payload: data[i + 9..end].to_vec(),
        });
        i = end;
    }
    let mut log = Vec::new();
    for e in &events {
        frame::encode(e.at_ms, &e.payload, &mut log);
    }
    let decoded = frame::decode(&log);
    assert_eq!(decoded.damaged_bytes, 0);
    assert_eq!(decoded.events, events);
    // A torn tail loses only the torn frame. (Its bytes are resynchronised
    // over; a payload that itself contains an intact frame would surface as
    // that frame, which is by design.)
    if !events.is_empty() {
        let torn = frame::decode(&log[..log.len() - 1]);
        assert!(torn.events.starts_with(&events[..events.len() - 1]));
        assert!(torn.damaged_bytes > 0);
    }
}
