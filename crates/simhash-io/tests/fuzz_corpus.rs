//! The regression run of the fuzz targets of the record parsers: every file of `fuzz/corpus/TARGET/` (and of
//! `fuzz/artifacts/TARGET/`, crashes found and fixed) goes through the function the target
//! fuzzes. See docs/fuzzing.md.

use std::path::{Path, PathBuf};

use simhash_io::fuzzing;

/// The files of a directory, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every corpus file (at least `min` of them) and every saved artifact of `target`.
fn run(target: &str, min: usize, check: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = files(&fuzz.join("corpus").join(target));
    assert!(
        corpus.len() >= min,
        "fuzz/corpus/{target}/ has {} files, expected at least {min}",
        corpus.len()
    );
    for path in corpus.iter().chain(&files(&fuzz.join("artifacts").join(target))) {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} fails", path.display());
    }
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
