//! Entry point for the fuzz target of `simhash eval`'s readers in `fuzz/` and for the
//! regression run of its corpus (`tests/fuzz_corpus.rs`); the targets of the record parsers
//! are in `simhash_io::fuzzing`. Takes arbitrary bytes as an input file and panics when eval
//! panics, gives scores out of range, or an error that does not name the file and line. Not
//! an API: no stability promise.

use std::fmt::Write as _;

use simhash_jobs::eval::{self, Scores};

/// The input as each of `simhash eval`'s files in turn (prediction, truth, tiers file),
/// with valid other files: eval never panics, an error names the fuzzed file (`FILE:LINE:
/// what` or `FILE: what`), and the scores it gives are in range.
pub fn eval_input(data: &[u8]) {
    const TRUTH: &[u8] = b"{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"b\",\"cluster\":1}\n\
        {\"id\":1.50,\"cluster\":\"x\"}\n{\"id\":2,\"cluster\":\"x\"}\n{\"id\":\"c\",\"cluster\":3}\n";
    const PREDICTION: &[u8] = b"id_a\tid_b\tdistance\na\tb\t1\n1.50\t2\t0\nc\ta\t3\n";
    const TIERS: &[u8] = b"id_a\tid_b\tlabel\ttier\na\tb\t1\teasy\n1.50\tc\t0\thard\n";
    let runs = [
        (
            "prediction",
            eval::evaluate_bytes(("p", data), ("truth", TRUTH), Some(("tiers", TIERS))),
            "p",
        ),
        ("truth", eval::evaluate_bytes(("p", PREDICTION), ("t", data), None), "t"),
        (
            "tiers file",
            eval::evaluate_bytes(("p", PREDICTION), ("truth", TRUTH), Some(("tiers", data))),
            "tiers",
        ),
        ("all three", eval::evaluate_bytes(("p", data), ("t", data), Some(("x", data))), ""),
    ];
    let lines = data.split_inclusive(|&b| b == b'\n').count() as u64;
    for (what, result, name) in runs {
        match result {
            Ok(scores) => check_scores(&scores),
            Err(err) => {
                check_eval_error(&format!("{:#}", anyhow::Error::from(err)), what, name, lines);
            }
        }
    }
}

fn check_scores(s: &Scores) {
    let unit = |x: f64| (0.0..=1.0 + 1e-9).contains(&x);
    let mut report = String::new();
    let _ = write!(report, "{s:?}");
    for x in [s.precision, s.recall, s.f1, s.bcubed_precision, s.bcubed_recall, s.bcubed_f1] {
        assert!(unit(x), "{report}");
    }
    assert!(s.true_positive_pairs <= s.predicted_pairs.min(s.true_pairs), "{report}");
    assert_eq!(s.false_positive_pairs, s.predicted_pairs - s.true_positive_pairs, "{report}");
    assert!(s.false_edges <= s.predicted_edges, "{report}");
    assert!(s.negatives_merged <= s.negatives, "{report}");
    assert!(s.unknown_ids <= s.documents, "{report}");
    for t in &s.tiers {
        assert!(t.found <= t.pairs && unit(t.recall), "{report}");
    }
}

/// An error names the file fuzzed (or, when all are, one of them): `NAME:LINE: what` (a line
/// of the file: 1 to `lines`) or `NAME: what`.
fn check_eval_error(message: &str, what: &str, name: &str, lines: u64) {
    let names: &[&str] = if name.is_empty() { &["p", "t", "x"] } else { &[name] };
    let ok = names.iter().any(|name| {
        message.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')).is_some_and(|rest| {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                rest.starts_with(' ')
            } else {
                rest[digits..].starts_with(": ")
                    && rest[..digits].parse::<u64>().is_ok_and(|line| (1..=lines).contains(&line))
            }
        })
    });
    assert!(ok, "the {what}'s error does not name it ({names:?}) and its line: {message:?}");
}
