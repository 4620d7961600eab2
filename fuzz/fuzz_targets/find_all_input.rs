//! The input as simhash-find-all input (one hash per line): see `simhash_io::fuzzing::find_all_input`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simhash_io::fuzzing::find_all_input(data));
