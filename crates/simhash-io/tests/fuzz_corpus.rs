//! The regression run of the fuzz targets of the record parsers: every file of `fuzz/corpus/TARGET/` (and of
//! `fuzz/artifacts/TARGET/`, crashes found and fixed) goes through the function the target
//! fuzzes. See docs/fuzzing.md.

use std::path::Path;

use simhash_io::fuzzing;

/// Runs every corpus file (at least `min` of them) and every saved artifact of `target`.
fn run(target: &str, min: usize, check: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    fuzzing::check_corpus(&fuzz, target, min, check);
}

#[test]
fn json_record_corpus() {
    run("json_record", 8, fuzzing::json_record);
}

#[test]
fn hash_tsv_corpus() {
    run("hash_tsv", 4, fuzzing::hash_tsv);
}

#[test]
fn find_all_input_corpus() {
    run("find_all_input", 3, fuzzing::find_all_input);
}
