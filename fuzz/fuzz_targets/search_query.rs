#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| disco_fuzz::search_query(data));
