//! The input as a JSONL file, each line read with several text and id paths: see `simhash_io::fuzzing::json_record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simhash_io::fuzzing::json_record(data));
