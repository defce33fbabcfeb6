#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcds_fuzz::hll_registers(data));
