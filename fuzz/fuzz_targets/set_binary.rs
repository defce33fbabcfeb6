#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mc_testkit::fuzz::set_binary_codec(data));
