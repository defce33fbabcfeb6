#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcds_fuzz::text_replies(data));
