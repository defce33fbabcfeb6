//! The C ABI's fuzz harness (hidden; the `fuzzing` feature): arbitrary
//! bytes read as a program of calls through the exported functions, with
//! the arguments a careless C caller passes: NULL handles and outputs,
//! names that are not UTF-8 or not NUL-free, empty and huge lengths (of
//! buffers that are really that long), absurd counts, TTLs and amounts,
//! and store URLs of any bytes (on the embedded store only: a harness
//! sends nothing over a network).
//!
//! Checks, after every call: it returned a code of the result table
//! (never `MCDS_PANIC`, and never a code `mcds_result_name` does not
//! know), and a failure left a message in `mcds_last_error_message`.
//! Every handle made is freed once at the end (the C contract; leaks show
//! under the fuzzer's leak checker).

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use crate::*;

/// The input, read from the front; empty reads give zeros.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |n, _| n << 8 | u64::from(self.byte().unwrap_or(0)))
    }

    /// Up to 255 bytes, their length first.
    fn bytes(&mut self) -> Vec<u8> {
        let len = usize::from(self.byte().unwrap_or(0));
        let take = len.min(self.0.len());
        let (head, rest) = self.0.split_at(take);
        self.0 = rest;
        head.to_vec()
    }

    /// A C string of the next bytes, cut at the first NUL.
    fn c_string(&mut self) -> CString {
        let mut bytes = self.bytes();
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(nul);
        }
        CString::new(bytes).unwrap_or_default()
    }
}

/// Panic unless `code` is a code of the table and not a panic, and a
/// failure left a message.
fn check(code: mcds_result) {
    assert_ne!(code, MCDS_PANIC, "a call panicked");
    // SAFETY: mcds_result_name returns a static C string.
    let name = unsafe { CStr::from_ptr(mcds_result_name(code)) };
    assert_ne!(
        name.to_bytes(),
        b"MCDS_UNKNOWN",
        "code {code} is in no table row"
    );
    if code != MCDS_OK {
        let message = mcds_last_error_message();
        assert!(!message.is_null(), "{name:?} without a message");
    }
}

/// `handle` or NULL, as the input says.
fn or_null<T>(input: &mut Input<'_>, handle: *mut T) -> *const T {
    if input.byte().unwrap_or(0) % 8 == 0 {
        null()
    } else {
        handle
    }
}

/// The harness: see the module docs.
pub fn calls(data: &[u8]) {
    let mut input = Input(data);
    let mut store: *mut mcds_store = null_mut();
    // The store: the embedded one, through a URL whose query is input
    // bytes (a NULL `out` first, once in a while).
    let url = {
        let mut text = b"memory://?".to_vec();
        text.extend(input.c_string().as_bytes());
        CString::new(text).unwrap_or_default()
    };
    // SAFETY: a NUL-terminated string and a live out pointer.
    let code = unsafe { mcds_store_new_url(url.as_ptr(), &mut store) };
    check(code);
    if code != MCDS_OK {
        // SAFETY: a live out pointer.
        check(unsafe { mcds_store_new_memory(&mut store) });
    }
    let (mut counters, mut sets, mut maps, mut locks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut tokens: Vec<*mut mcds_cancel> = Vec::new();
    for _ in 0..64 {
        let Some(op) = input.byte() else { break };
        let name = input.c_string();
        let name_ptr: *const c_char = if op & 0x80 != 0 {
            null()
        } else {
            name.as_ptr()
        };
        let s = or_null(&mut input, store);
        // SAFETY (every call below): each pointer is NULL or live (a
        // handle made here and not freed yet, an output on the stack, a
        // buffer of at least the length passed).
        unsafe {
            match op % 14 {
                0 => {
                    let mut c = null_mut();
                    check(mcds_counter_new(s, name_ptr, &mut c));
                    if !c.is_null() {
                        counters.push(c);
                    }
                }
                1 => {
                    let Some(&c) = counters.last() else { continue };
                    let mut out = 0;
                    let out_ptr = if op & 0x40 != 0 { null_mut() } else { &mut out };
                    check(mcds_counter_incr(
                        or_null(&mut input, c),
                        input.u64(),
                        out_ptr,
                    ));
                }
                2 => {
                    // incr_many over every counter so far (and NULLs).
                    let handles: Vec<*const mcds_counter> =
                        counters.iter().map(|&c| or_null(&mut input, c)).collect();
                    let deltas: Vec<u64> = handles.iter().map(|_| input.u64()).collect();
                    let mut values = vec![0u64; handles.len()];
                    let mut results = vec![0u32; handles.len()];
                    check(mcds_counter_incr_many(
                        if handles.is_empty() {
                            null()
                        } else {
                            handles.as_ptr()
                        },
                        deltas.as_ptr(),
                        handles.len(),
                        values.as_mut_ptr(),
                        results.as_mut_ptr(),
                    ));
                    results.iter().for_each(|&r| check(r));
                }
                3 => {
                    let mut set = null_mut();
                    check(mcds_set_new(s, name_ptr, &mut set));
                    if !set.is_null() {
                        sets.push(set);
                    }
                }
                4 => {
                    let Some(&set) = sets.last() else { continue };
                    let member = input.bytes();
                    let member_ptr = if op & 0x40 != 0 {
                        null()
                    } else {
                        member.as_ptr()
                    };
                    let h = or_null(&mut input, set);
                    if op & 0x20 != 0 {
                        check(mcds_set_remove(h, member_ptr, member.len()));
                    } else {
                        check(mcds_set_add(h, member_ptr, member.len()));
                    }
                }
                5 => {
                    let Some(&set) = sets.last() else { continue };
                    let mut list = null_mut();
                    check(mcds_set_members(or_null(&mut input, set), &mut list));
                    if !list.is_null() {
                        let mut len = 0;
                        check(mcds_bytes_list_len(list, &mut len));
                        let (mut data, mut data_len) = (null(), 0);
                        // Any index, in range or not.
                        let index = input.u64() as usize;
                        check(mcds_bytes_list_get(list, index, &mut data, &mut data_len));
                        mcds_bytes_list_free(list);
                    }
                }
                6 => {
                    let mut m = null_mut();
                    check(mcds_counter_map_new(s, name_ptr, &mut m));
                    if !m.is_null() {
                        maps.push(m);
                    }
                }
                7 => {
                    let Some(&m) = maps.last() else { continue };
                    let field = input.bytes();
                    let mut out = 0;
                    check(mcds_counter_map_incr(
                        or_null(&mut input, m),
                        field.as_ptr(),
                        field.len(),
                        input.u64() as i64,
                        &mut out,
                    ));
                }
                8 => {
                    let Some(&m) = maps.last() else { continue };
                    let field = input.bytes();
                    let mut existed = false;
                    check(mcds_counter_map_remove(
                        or_null(&mut input, m),
                        field.as_ptr(),
                        field.len(),
                        &mut existed,
                    ));
                    let (mut fields, mut values) = (null_mut(), null_mut());
                    check(mcds_counter_map_get_all(m, &mut fields, &mut values));
                    if !fields.is_null() {
                        mcds_bytes_list_free(fields);
                    }
                    if !values.is_null() {
                        mcds_int_list_free(values);
                    }
                }
                9 => {
                    let mut lock = null_mut();
                    let ttl = input.u64() as u32;
                    check(mcds_lock_new(s, name_ptr, ttl, &mut lock));
                    if !lock.is_null() {
                        locks.push(lock);
                    }
                }
                10 => {
                    let Some(&lock) = locks.last() else { continue };
                    let mut done = false;
                    let h = or_null(&mut input, lock);
                    if op & 0x40 != 0 {
                        check(mcds_lock_release(h, &mut done));
                    } else {
                        check(mcds_lock_try_acquire(h, &mut done));
                    }
                }
                11 => {
                    // Plain key/value: the key is the name's bytes (NULL
                    // with any length when the name pointer is), the value
                    // and the numbers from the input.
                    let key = name.as_bytes();
                    let (key_ptr, key_len) = if name_ptr.is_null() {
                        (null(), usize::from(input.byte().unwrap_or(0)))
                    } else {
                        (key.as_ptr(), key.len())
                    };
                    let value = input.bytes();
                    let ttl = input.u64() as u32;
                    let (mut found, mut n) = (false, 0u64);
                    match input.byte().unwrap_or(0) % 6 {
                        0 => {
                            let mut list = null_mut();
                            check(mcds_store_get(s, key_ptr, key_len, &mut list));
                            mcds_bytes_list_free(list);
                        }
                        1 => check(mcds_store_set(
                            s,
                            key_ptr,
                            key_len,
                            value.as_ptr(),
                            value.len(),
                            ttl,
                        )),
                        2 => check(mcds_store_add(
                            s,
                            key_ptr,
                            key_len,
                            value.as_ptr(),
                            value.len(),
                            ttl,
                            &mut found,
                        )),
                        3 => check(mcds_store_delete(s, key_ptr, key_len, &mut found)),
                        4 => check(mcds_store_incr(
                            s,
                            key_ptr,
                            key_len,
                            input.u64(),
                            &mut n,
                            &mut found,
                        )),
                        _ => check(mcds_store_incr_or_init(
                            s,
                            key_ptr,
                            key_len,
                            input.u64(),
                            input.u64(),
                            ttl,
                            &mut n,
                        )),
                    }
                }
                12 => {
                    // Cancellation tokens: made, triggered (NULL too), put
                    // in charge of this thread or taken off it; the calls
                    // after them run under whatever token is current.
                    match input.byte().unwrap_or(0) % 4 {
                        0 => {
                            let mut t = null_mut();
                            check(mcds_cancel_new(if op & 0x40 != 0 {
                                null_mut()
                            } else {
                                &mut t
                            }));
                            if !t.is_null() {
                                tokens.push(t);
                            }
                        }
                        1 => {
                            let t = tokens.last().copied().unwrap_or(null_mut());
                            check(mcds_cancel_trigger(or_null(&mut input, t)));
                        }
                        2 => {
                            let t = tokens.last().copied().unwrap_or(null_mut());
                            check(mcds_cancel_set_current(or_null(&mut input, t)));
                        }
                        _ => check(mcds_cancel_set_current(null())),
                    }
                }
                _ => {
                    // A prefixed view of the store, used once and freed.
                    let mut prefixed = null_mut();
                    check(mcds_store_with_prefix(s, name_ptr, &mut prefixed));
                    if !prefixed.is_null() {
                        let mut c = null_mut();
                        check(mcds_counter_new(prefixed, c"n".as_ptr(), &mut c));
                        if !c.is_null() {
                            let mut v = 0;
                            check(mcds_counter_get(c, &mut v));
                            mcds_counter_free(c);
                        }
                        mcds_store_free(prefixed);
                    }
                }
            }
        }
    }
    // SAFETY: every handle was made here and is freed once.
    unsafe {
        counters.into_iter().for_each(|c| mcds_counter_free(c));
        sets.into_iter().for_each(|s| mcds_set_free(s));
        maps.into_iter().for_each(|m| mcds_counter_map_free(m));
        locks.into_iter().for_each(|l| mcds_lock_free(l));
        mcds_store_free(store);
        check(mcds_cancel_set_current(null()));
        tokens.into_iter().for_each(|t| mcds_cancel_free(t));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn programs_of_every_op_pass() {
        let mut program = vec![5, b'a', b'=', b'1', 0, 0];
        for op in 0..14u8 {
            for flags in [0u8, 0x20, 0x40, 0x80] {
                program.extend([op | flags, 2, b'n', op, 1]);
                program.extend([0xff; 12]);
            }
        }
        super::calls(&program);
        super::calls(&[]);
        super::calls(&[0, 0x80, 0, 0]);
    }
}
