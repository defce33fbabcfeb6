//! The codec internals, for the fuzz harnesses in `mcds-fuzz` (and the codec
//! benchmark) only. Behind the `fuzzing` feature and hidden from the docs:
//! not part of the API, no stability promise.

pub use crate::codec::{Op, binary, text};
