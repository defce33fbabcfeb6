//! The frame codec, for the fuzz harnesses in `mcds-fuzz` (and the codec
//! benchmark) only. Behind the `fuzzing` feature and hidden from the docs:
//! not part of the API, no stability promise.

/// The frame codec's functions and types.
pub mod frame {
    pub use crate::frame::{Decoded, Event, decode, encode, frame_len};
}
