#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| disco_fuzz::name_resolution(data));
