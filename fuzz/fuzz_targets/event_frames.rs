#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mc_fuzz::event_frames(data));
