#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| disco_fuzz::arg_repair(data));
