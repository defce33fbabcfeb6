//! # libmcds — the C ABI of mcds
//!
//! `include/mcds.h` is generated from this crate by cbindgen and committed; a
//! test fails when it is stale. Conventions, in the style of rustls-ffi:
//!
//! * Every name starts with `mcds_`. Handles (`mcds_store`, `mcds_counter`,
//!   `mcds_lock`, `mcds_set`, `mcds_window`, `mcds_limiter`, `mcds_log`,
//!   `mcds_table`, the sketches, the time series, the result lists, …) are opaque;
//!   `mcds_<type>_new…` (or `mcds_<type>_with_…`, which derives a new handle
//!   from another) creates one and `mcds_<type>_free` frees it (`NULL` is a
//!   no-op; freeing twice is undefined behaviour). Strings mcds hands out are
//!   freed with `mcds_string_free`. C never frees Rust memory with `free()`.
//! * Ownership is in every function's comment: inputs are borrowed for the
//!   call (mcds keeps no pointer the caller passed in, except the opaque
//!   `ctx` of a callback during the call); an output a call creates is the
//!   caller's, to free with the function named; a pointer into a list is
//!   the list's, valid until the list is freed.
//! * Every fallible function returns an `mcds_result` (`uint32_t`): `MCDS_OK`
//!   (0) or an error code. Codes are never reused. Outputs are written only on
//!   success (save the per-increment results of `mcds_counter_incr_many`,
//!   written once its batch is sent). `mcds_result_name()` names a code and
//!   `mcds_last_error_message()` gives the calling thread's last error detail.
//! * Every body runs inside a panic boundary: a Rust panic becomes
//!   `MCDS_PANIC`, never an unwind into C. No Rust enum is ever read from C.
//! * Names are NUL-terminated UTF-8; member bytes are a pointer and a length;
//!   a batch is two parallel arrays (pointers, lengths) and a count.
//!   Every handle can be shared between threads: only `mcds_<type>_free`
//!   takes a `*mut` handle.
//!
//! The modules, in the order cbindgen writes them to the header:
//!
//! | module     | holds                                                        |
//! |------------|--------------------------------------------------------------|
//! | `result`   | `mcds_result`, the `MCDS_…` codes, their one table            |
//! | `boundary` | the last-error message, the panic boundary, pointer helpers   |
//! | `store`    | `mcds_store`                                                  |
//! | `store_builder` | `mcds_store_builder` (timeouts, item size, memory budget) |
//! | `counter`  | `mcds_counter`                                                |
//! | `counter_map` | `mcds_counter_map` (decimals cross as text)                |
//! | `shadow`   | `mcds_shadow_counter`                                         |
//! | `view`     | `mcds_view_counter`, `mcds_loader`                            |
//! | `lock`     | `mcds_lock`                                                   |
//! | `set`      | `mcds_set`                                                    |
//! | `sharded_set` | `mcds_sharded_set`                                         |
//! | `int_array` | `mcds_int_array`                                             |
//! | `list`     | the result lists `mcds_bytes_list`, `mcds_int_list`, `mcds_event_list`, `mcds_bucket_list`, `mcds_slot_list`; `mcds_string_free` |
//! | `window`   | `mcds_window`                                                 |
//! | `limiter`  | `mcds_limiter`, `mcds_decision`                               |
//! | `log`      | `mcds_log`, `mcds_cursor`                                     |
//! | `table`    | `mcds_table`                                                  |
//! | `sketch`   | `mcds_hll`, `mcds_bloom`, `mcds_bitmap`                       |
//! | `timeseries` | `mcds_timeseries`, `mcds_packed_series`; their values `mcds_resolution`, `mcds_i128`, `mcds_stats`, `mcds_bucket`, `mcds_slot` |
//! | `leaderboard` | `mcds_leaderboard`, `mcds_board_summary`, `mcds_entry_list` |
//! | `scalable_bloom` | `mcds_scalable_bloom`                                  |

#![allow(non_camel_case_types)]
// Everything that touches raw pointers lives in the small helpers of
// `boundary`; each `unsafe` block states why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{CStr, c_char};

// cbindgen writes include/mcds.h in the order it reads items: this file's,
// then each module's in the order declared here (one per group, so that
// rustfmt keeps the order).
mod result;

mod boundary;

mod store;

mod store_builder;

mod cancel;

mod update;

mod kv;

mod counter;

mod counter_map;

mod shadow;

mod view;

mod lock;

mod set;

mod sharded_set;

mod int_array;

mod list;

mod window;

mod limiter;

mod log;

mod table;

mod sketch;

mod timeseries;

mod leaderboard;

mod scalable_bloom;

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;

pub use boundary::mcds_last_error_message;
pub use cancel::*;
pub use counter::*;
pub use counter_map::*;
pub use int_array::*;
pub use kv::*;
pub use leaderboard::*;
pub use limiter::*;
pub use list::*;
pub use lock::*;
pub use log::*;
pub use result::*;
pub use scalable_bloom::*;
pub use set::*;
pub use shadow::*;
pub use sharded_set::*;
pub use sketch::*;
pub use store::*;
pub use store_builder::*;
pub use table::*;
pub use timeseries::*;
pub use view::*;
pub use window::*;

/// The library version, e.g. `"0.1.0"`: a static string.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every handle can be shared between threads: C may call any function
    /// on one from several threads at once.
    #[test]
    fn every_handle_is_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<mcds_store>();
        shared::<mcds_store_builder>();
        shared::<mcds_counter>();
        shared::<mcds_counter_map>();
        shared::<mcds_shadow_counter>();
        shared::<mcds_view_counter>();
        shared::<mcds_lock>();
        shared::<mcds_set>();
        shared::<mcds_sharded_set>();
        shared::<mcds_int_array>();
        shared::<mcds_bytes_list>();
        shared::<mcds_int_list>();
        shared::<mcds_event_list>();
        shared::<mcds_window>();
        shared::<mcds_limiter>();
        shared::<mcds_log>();
        shared::<mcds_table>();
        shared::<mcds_hll>();
        shared::<mcds_bloom>();
        shared::<mcds_bitmap>();
        shared::<mcds_timeseries>();
        shared::<mcds_packed_series>();
        shared::<mcds_bucket_list>();
        shared::<mcds_slot_list>();
        shared::<mcds_leaderboard>();
        shared::<mcds_entry_list>();
        shared::<mcds_scalable_bloom>();
    }
}
