//! Tests of `simhash eval`: hand-computed scores and every input form.

use super::*;
use simhash_io::DEFAULT_MAX_RECORD_BYTES;
use std::path::PathBuf;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Truth: {a, b, c}, {d, e}, {f}.
const TRUTH: &str = "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"b\",\"cluster\":1}\n\
    {\"id\":\"c\",\"cluster\":1}\n{\"id\":\"d\",\"cluster\":\"x\"}\n\
    {\"id\":\"e\",\"cluster\":\"x\"}\n{\"id\":\"f\",\"cluster\":7}\n";

#[test]
fn hand_computed_scores() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    // Predicted clusters {a, b}, {d, f}, {c}, {e}.
    let pred = write(&dir, "p.tsv", "id_a\tid_b\tdistance\na\tb\t1\nd\tf\t2\n");
    let s = evaluate(&pred, &truth, None).unwrap();
    assert_eq!((s.documents, s.true_pairs, s.predicted_pairs), (6, 4, 2));
    assert_eq!((s.true_positive_pairs, s.false_positive_pairs), (1, 1));
    assert!((s.precision - 0.5).abs() < 1e-12 && (s.recall - 0.25).abs() < 1e-12);
    // B-cubed precision: a, b: 1; c: 1; d: 1/2; e: 1; f: 1/2 → 5/6.
    // B-cubed recall: a, b: 2/3; c: 1/3; d: 1/2; e: 1/2; f: 1 → 11/3 / 6.
    assert!((s.bcubed_precision - 5.0 / 6.0).abs() < 1e-12);
    assert!((s.bcubed_recall - 11.0 / 18.0).abs() < 1e-12);
    assert_eq!((s.predicted_edges, s.false_edges), (2, 1));
    assert_eq!(s.unknown_ids, 0);
}

#[test]
fn every_prediction_format_gives_the_same_partition() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    let forms = [
        // simhash pairs
        "id_a\tid_b\tdistance\na\tb\t3\nb\tc\t0\nd\te\t1\n",
        // bare pairs, no header
        "a\tb\nc\tb\n\ne\td\n",
        // simhash cluster (numeric labels that are also ids elsewhere must not join)
        "id\thash\tcluster\na\t1\t0\nb\t2\t0\nc\t3\t0\nd\t4\t1\ne\t5\t1\n",
        // simhash dedup --removed
        "{\"id\":\"b\",\"duplicate_of\":\"a\",\"distance\":2}\n\
         {\"id\":\"c\",\"duplicate_of\":\"a\",\"distance\":2}\n\
         {\"id\":\"e\",\"duplicate_of\":\"d\",\"distance\":0}\n",
        // clusters as lists
        "{\"ids\":[\"a\",\"b\",\"c\"]}\n[\"d\",\"e\"]\n",
    ];
    for (i, form) in forms.iter().enumerate() {
        let pred = write(&dir, &format!("p{i}"), form);
        let s = evaluate(&pred, &truth, None).unwrap();
        assert_eq!((s.precision, s.recall, s.bcubed_recall), (1.0, 1.0, 1.0), "form {i}");
        assert_eq!(s.false_positive_pairs, 0, "form {i}");
    }
}

#[test]
fn numeric_ids_and_cluster_numbers_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "t.tsv", "id_a\tid_b\n0\t1\n");
    // Records 1 and 2 are cluster 0; record 0 is alone in cluster 5.
    let pred = write(&dir, "p.tsv", "id\thash\tcluster\n1\t9\t0\n2\t9\t0\n0\t9\t5\n");
    let s = evaluate(&pred, &truth, None).unwrap();
    assert_eq!((s.true_positive_pairs, s.predicted_pairs, s.true_pairs), (0, 1, 1));
    assert_eq!(s.unknown_ids, 1);
}

#[test]
fn numeric_ids_keep_their_text() {
    let dir = tempfile::tempdir().unwrap();
    // As `simhash pairs` writes them: exactly as they were in the input.
    let truth = write(
        &dir,
        "t.jsonl",
        "{\"id\":1.50,\"cluster\":0}\n{\"id\":1e2,\"cluster\":0}\n\
         {\"id\":12345678901234567890123,\"cluster\":0}\n{\"id\":\"1.5\",\"cluster\":1}\n",
    );
    let pred = write(&dir, "p.tsv", "1.50\t1e2\n1e2\t12345678901234567890123\n");
    let s = evaluate(&pred, &truth, None).unwrap();
    assert_eq!((s.precision, s.recall, s.unknown_ids), (1.0, 1.0, 0));
    // Ids with spaces are ids, not trimmed.
    let pred = write(&dir, "q.tsv", " 1.50\t1e2\n");
    assert_eq!(evaluate(&pred, &truth, None).unwrap().unknown_ids, 1);
}

#[test]
fn tiers_and_negatives() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    let tiers = write(
        &dir,
        "pairs.tsv",
        "id_a\tid_b\tlabel\ttier\na\tb\t1\teasy\na\tc\t1\thard\nb\tc\t1\thard\n\
         d\te\t1\tmedium\nc\tf\t0\tnone\n",
    );
    let pred = write(&dir, "p.tsv", "a\tb\nc\tf\n");
    let s = evaluate(&pred, &truth, Some(&tiers)).unwrap();
    let got: Vec<(&str, u64, u64)> =
        s.tiers.iter().map(|t| (t.tier.as_str(), t.found, t.pairs)).collect();
    assert_eq!(got, [("easy", 1, 1), ("medium", 0, 1), ("hard", 0, 2)]);
    assert_eq!((s.negatives_merged, s.negatives), (1, 1));
}

#[test]
fn bad_lines_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    let cases = [
        ("bad1.jsonl", "{\"id\":\"a\",\"cluster\":1}\n{\"id\": [1]}\n", ":2: \"id\" must be"),
        ("bad2.tsv", "a\tb\njust-one-column\n", ":2: expected two TAB-separated ids"),
        ("bad3.jsonl", "\n\n{not json\n", ":3: invalid JSON object"),
        ("bad4.tsv", "id_a\tid_b\tlabel\na\tb\tmaybe\n", ":2: label must be 1 or 0"),
        ("bad5.jsonl", "{\"text\":\"x\"}\n", ":1: expected {\"id\""),
        (
            "bad6.jsonl",
            "{\"id\":\"a\",\"cluster\":1,\"cluster\":2}\n",
            ":1: duplicate key \"cluster\"",
        ),
        ("bad7.jsonl", "{\"id\":\"a\",\"id\":\"b\",\"group\":1}\n", ":1: duplicate key \"id\""),
        ("bad8.jsonl", "{\"ids\":[\"a\"],\"ids\":[\"a\",\"b\"]}\n", ":1: duplicate key \"ids\""),
    ];
    for (name, text, want) in cases {
        let pred = write(&dir, name, text);
        let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
    }
    // Keys eval does not read may repeat.
    let fine = write(&dir, "fine.jsonl", "{\"id\":\"a\",\"cluster\":1,\"x\":1,\"x\":2}\n");
    assert!(evaluate(&fine, &truth, None).is_ok());
    let missing = dir.path().join("missing.tsv");
    assert!(evaluate(&missing, &truth, None).is_err());
    let no_tiers = write(&dir, "plain.tsv", "a\tb\n");
    let err = format!("{:#}", evaluate(&no_tiers, &truth, Some(&no_tiers)).unwrap_err());
    assert!(err.contains("no labelled pairs"), "{err}");
}

#[test]
fn empty_truth_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pred = write(&dir, "p.tsv", "a\tb\n");
    for (name, text) in [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n  \n\r\n"),
        ("header.tsv", "id_a\tid_b\tlabel\n"),
        ("labels-header.tsv", "id\tcluster\n"),
    ] {
        let truth = write(&dir, name, text);
        let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
        assert_eq!(err, format!("{}: no labelled records", truth.display()), "{name}");
    }
}

#[test]
fn truth_id_in_two_clusters_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pred = write(&dir, "p.tsv", "a\tb\n");
    let cases = [
        (
            "labels.jsonl",
            "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"b\",\"cluster\":1}\n\
             {\"id\":\"a\",\"cluster\":2}\n",
            ":3: id \"a\" is already in cluster \"1\" (line 1)",
        ),
        (
            "labels.tsv",
            "id\thash\tcluster\na\t1\t0\nb\t2\t0\n\nb\t2\t5\n",
            ":5: id \"b\" is already in cluster \"0\" (line 3)",
        ),
        (
            "lists.jsonl",
            "[\"a\",\"b\"]\n{\"ids\":[\"c\",\"b\"]}\n",
            ":2: id \"b\" is already in the cluster of line 1",
        ),
        (
            "mixed.jsonl",
            "{\"id\":7,\"group\":\"x\"}\n[7,8]\n",
            ":2: id \"7\" is already in cluster \"x\" (line 1)",
        ),
    ];
    for (name, text, want) in cases {
        let truth = write(&dir, name, text);
        let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
        assert_eq!(err, format!("{}{want}", truth.display()), "{name}");
    }
    // The same cluster again, an id repeated in its own list, and pairs are fine; so is
    // a prediction that puts an id in two clusters (they are merged).
    let truth = write(
        &dir,
        "ok.jsonl",
        "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"a\",\"cluster\":1}\n[\"c\",\"d\",\"c\"]\n",
    );
    assert!(evaluate(&pred, &truth, None).is_ok());
    let pairs = write(&dir, "pairs.tsv", "a\tb\nb\tc\na\tc\n");
    assert!(evaluate(&pred, &pairs, None).is_ok());
    let pred =
        write(&dir, "two.jsonl", "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"a\",\"cluster\":2}\n");
    assert!(evaluate(&pred, &truth, None).is_ok());
}

#[test]
fn in_memory_inputs_read_as_files() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    let pred = write(&dir, "p.tsv", "a\tb\nd\tf\n");
    let from_files = evaluate(&pred, &truth, None).unwrap();
    let in_memory =
        evaluate_bytes(("p.tsv", b"a\tb\nd\tf\n"), ("truth.jsonl", TRUTH.as_bytes()), None)
            .unwrap();
    assert_eq!(format!("{from_files:?}"), format!("{in_memory:?}"));
    let err = evaluate_bytes(("p.tsv", b"a\n"), ("t.tsv", b"x\ty\n"), None).unwrap_err();
    assert_eq!(format!("{err:#}"), "p.tsv:1: expected two TAB-separated ids");
}

#[test]
fn lines_and_ids_follow_the_rules_of_every_command() {
    let truth = ("t.jsonl", TRUTH.as_bytes());
    // A byte-order mark at the start of a line is dropped, so the header is a header.
    let bom = evaluate_bytes(("p.tsv", b"\xef\xbb\xbfid_a\tid_b\na\tb\n"), truth, None).unwrap();
    assert_eq!((bom.predicted_pairs, bom.unknown_ids), (1, 0));
    // Ids that no command accepts.
    for (pred, want) in [
        (&b"{\"id\":\"\",\"cluster\":1}\n"[..], "p:1: empty id"),
        (b"a\tb\n\xef\xbb\xbf\xef\xbb\xbfc\td\n", "p:2: id \"\\u{feff}c\" starts with"),
        (b"[\"a\",\"b\\rc\"]\n", "p:1: id \"b\\rc\" contains a TAB or line break"),
    ] {
        let err = format!("{:#}", evaluate_bytes(("p", pred), truth, None).unwrap_err());
        assert!(err.starts_with(want), "{err}");
    }
    // Invalid UTF-8 is named as before.
    let err = evaluate_bytes(("p", b"a\tb\n\xff\tc\n"), truth, None).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "p:2: read error (the prediction must be UTF-8 text): stream did not contain valid \
         UTF-8"
    );
}

#[test]
fn a_line_over_the_limit_is_an_error() {
    let mut pred = b"a\tb\n".to_vec();
    pred.resize(pred.len() + DEFAULT_MAX_RECORD_BYTES as usize + 1, b'x');
    let err = evaluate_bytes(("p", &pred), ("t.jsonl", TRUTH.as_bytes()), None).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "p:2: line of {} bytes is longer than the limit of {DEFAULT_MAX_RECORD_BYTES} bytes",
            DEFAULT_MAX_RECORD_BYTES + 1
        )
    );
}

#[test]
fn empty_prediction_scores_zero_recall() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(&dir, "truth.jsonl", TRUTH);
    let pred = write(&dir, "empty.tsv", "");
    let s = evaluate(&pred, &truth, None).unwrap();
    assert_eq!((s.precision, s.recall, s.f1), (1.0, 0.0, 0.0));
}
