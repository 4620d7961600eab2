//! The relation's verdict on every pair of the judged real-text sets (`benches/judged`), as
//! a TSV on standard output, for reading the relation's misses against the judges' labels
//! and for `benches/judged/rejudge.py select`:
//!
//! ```sh
//! cargo run --release -p benches --bin judged_verdicts > verdicts.tsv
//! cargo run --release -p benches --bin judged_verdicts -- debian.jsonl > debian.tsv
//! ```
//!
//! With no argument, the sets `rejudge.py` reads; otherwise the sets named (files of
//! `benches/judged`, or paths).
//!
//! Columns: set, line (0-based), bucket, label, relation, removed id, kept id, and the
//! evidence's counts (own words, new words, words alone, names and numbers, words swapped,
//! words of a replaced phrase, stock packaging words alone in the removed text and in the
//! kept one; see `simhash_index::lsh::Evidence`). Texts are read as the
//! judged test reads them (`default-v1` token words).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;

use simhash_core::Fingerprinter;
use simhash_index::lsh::evidence;

/// The judged sets `rejudge.py` reads, in its order.
const SETS: [&str; 3] = ["pairs.jsonl", "fresh.jsonl", "fresh2.jsonl"];

fn words(fp: &Fingerprinter, text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    fp.for_each_shingle_and_token(text, |_| {}, |t| out.push(t));
    out
}

fn run() -> Result<(), String> {
    let fp = Fingerprinter::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let write_err = |e: std::io::Error| format!("standard output: {e}");
    let named: Vec<String> = std::env::args().skip(1).collect();
    let sets: Vec<&str> =
        if named.is_empty() { SETS.to_vec() } else { named.iter().map(String::as_str).collect() };
    for set in sets {
        let path = if set.contains('/') {
            set.to_string()
        } else {
            concat!(env!("CARGO_MANIFEST_DIR"), "/judged/").to_string() + set
        };
        let data = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        for (line, text) in data.lines().enumerate() {
            let v: serde_json::Value =
                serde_json::from_str(text).map_err(|e| format!("{path}:{}: {e}", line + 1))?;
            let field = |k: &str| {
                v[k].as_str().ok_or_else(|| format!("{path}:{}: no string {k:?}", line + 1))
            };
            let bucket =
                v["bucket"].as_u64().ok_or_else(|| format!("{path}:{}: no bucket", line + 1))?;
            let e = evidence(&words(&fp, field("removed")?), &words(&fp, field("kept")?));
            writeln!(
                out,
                "{set}\t{line}\t{bucket}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                field("label")?,
                e.relation,
                field("removed_id")?,
                field("kept_id")?,
                e.own_words,
                e.new_words,
                e.filled_words,
                e.numbers,
                e.swapped,
                e.replaced,
                e.stock_words,
                e.kept_stock_words,
            )
            .map_err(write_err)?;
        }
    }
    out.flush().map_err(write_err)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("judged_verdicts: {e}");
        std::process::exit(1);
    }
}
