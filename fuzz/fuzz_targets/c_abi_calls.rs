#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcds_fuzz::c_abi_calls(data));
