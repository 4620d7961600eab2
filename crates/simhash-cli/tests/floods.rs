//! Short documents that share a phrase (titles, product names, short posts): the MinHash
//! searches stay near-linear, with the same decisions.

use std::fmt::Write as _;

use crate::util::Dir;

/// `n` documents of four word 3-gram shingles: two their own, one shared with the
/// documents of the same `i % 500` (Jaccard 1/3) and the phrase's, shared with all
/// (Jaccard 1/7: a band shared about one time in ten); every tenth a near-copy of the one
/// before (its last word changed: Jaccard 3/5).
fn flood(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let text = if i % 10 == 9 {
            format!("doc {} alpha beta gamma copy{i}", i - 1)
        } else {
            format!("doc {i} alpha beta gamma {}", i % 500)
        };
        writeln!(out, "{{\"id\":\"d{i}\",\"text\":\"{text}\"}}").unwrap();
    }
    out
}

fn stats(dir: &Dir) -> serde_json::Value {
    serde_json::from_str(&dir.read("stats.json")).unwrap()
}

/// Once about `n² / 20` candidates (45 million here, minutes in a debug build), now a few
/// a document (the dedup walk turns to its prefix index once the band candidates show the
/// flood, after a few million); what the commands decide is what brute force over the band
/// candidates decides (the engine's tests), so here: the near-copies and nothing else.
#[test]
fn short_documents_sharing_a_phrase_stay_linear() {
    let n = 30_000;
    let dir = Dir::new();
    dir.write("flood.jsonl", flood(n));
    let common = ["--stats", "stats.json", "--quiet"];

    dir.run(
        &[
            &["dedup", "flood.jsonl", "-o", "kept.jsonl", "--removed", "removed.jsonl"][..],
            &common[..],
        ]
        .concat(),
    )
    .code(0);
    let s = stats(&dir);
    assert!(s["candidates"].as_u64().unwrap() < 6_000_000, "{s}");
    let removed: Vec<serde_json::Value> =
        dir.read("removed.jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The near-copies share a band with their original nearly always (3/5 over 37 bands
    // of 3 rows: all but one in 10^4), and nothing else is similar.
    assert!(removed.len() >= n / 10 - 3, "{}", removed.len());
    for r in &removed {
        let id: usize = r["id"].as_str().unwrap()[1..].parse().unwrap();
        assert_eq!(id % 10, 9, "{r}");
        assert_eq!(r["duplicate_of"], format!("d{}", id - 1), "{r}");
    }
    assert_eq!(dir.read("kept.jsonl").lines().count() + removed.len(), n);

    dir.run(&[&["pairs", "flood.jsonl", "-o", "pairs.tsv"][..], &common[..]].concat()).code(0);
    let s = stats(&dir);
    assert!(s["candidates"].as_u64().unwrap() < 20 * n as u64, "{s}");
    // A header line, then one pair a removed near-copy.
    assert_eq!(dir.read("pairs.tsv").lines().count(), removed.len() + 1);

    dir.run(&[&["cluster", "flood.jsonl", "-o", "clusters.tsv"][..], &common[..]].concat()).code(0);
    let s = stats(&dir);
    assert!(s["candidates"].as_u64().unwrap() < 20 * n as u64, "{s}");
}
