//! The input as a hash TSV file (`id<TAB>hash`): see `simhash_io::fuzzing::hash_tsv`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simhash_io::fuzzing::hash_tsv(data));
