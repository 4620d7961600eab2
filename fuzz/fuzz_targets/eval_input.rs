//! The input as each of `simhash eval`'s files in turn: see `simhash_cli::fuzzing::eval_input`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simhash_cli::fuzzing::eval_input(data));
