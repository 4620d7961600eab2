//! The regression run of the fuzz target of `simhash eval` (the record parsers' targets run
//! in simhash-io's `tests/fuzz_corpus.rs`): every file of `fuzz/corpus/TARGET/` (and of
//! `fuzz/artifacts/TARGET/`, crashes found and fixed) goes through the function the target
//! fuzzes. See docs/fuzzing.md.

use std::path::Path;

use simhash_cli::fuzzing;
use simhash_io::fuzzing::check_corpus;

/// Runs every corpus file (at least `min` of them) and every saved artifact of `target`.
fn run(target: &str, min: usize, check: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    check_corpus(&fuzz, target, min, check);
}

#[test]
fn eval_input_corpus() {
    run("eval_input", 8, fuzzing::eval_input);
}
