//! Dedup removes only records that verify against a kept one, floods collapse, no
//! equality by a hash collision, huge clusters are named, and an input that changes under
//! the run writes nothing.

use std::fmt::Write as _;

use crate::util::{Dir, Rng};

/// A chain of templated documents: each shares most of its words with the next, so
/// components chain them while most pairs along the chain are far apart.
fn chain(n: usize) -> (String, Vec<String>) {
    let mut words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let mut texts = Vec::new();
    let mut jsonl = String::new();
    for i in 0..n {
        // Replace four words a step: neighbours stay near-duplicates, ends drift apart.
        for k in 0..4 {
            words[(i * 4 + k) % 40] = format!("v{i}x{k}");
        }
        let text = words.join(" ");
        writeln!(jsonl, "{}", serde_json::json!({"id": i, "text": text})).unwrap();
        texts.push(text);
    }
    (jsonl, texts)
}

/// The exact Jaccard similarity of two texts' default shingle sets.
fn jaccard(a: &str, b: &str) -> f64 {
    let fp = simhash_core::Fingerprinter::new();
    let set = |t: &str| {
        let mut s = Vec::new();
        fp.for_each_feature(t, |h, _| s.push(h));
        simhash_core::shingle_set(s)
    };
    simhash_core::jaccard(&set(a), &set(b))
}

fn removed(dir: &Dir) -> Vec<serde_json::Value> {
    dir.read("removed.jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn dedup_removes_only_records_that_verify_against_a_kept_one() {
    let dir = Dir::new();
    let (jsonl, texts) = chain(60);
    dir.write("c.jsonl", &jsonl);
    let index = |v: &serde_json::Value| v.as_u64().unwrap() as usize;
    // The default: every removal verifies against its kept record, and no two kept
    // records verify against each other.
    for threads in ["1", "3"] {
        let run = dir.run(&[
            "dedup",
            "c.jsonl",
            "-o",
            "kept.jsonl",
            "--removed",
            "removed.jsonl",
            "-j",
            threads,
        ]);
        run.code(0);
        let gone = removed(&dir);
        assert!(gone.len() > 10, "too few removals to test: {}", gone.len());
        for r in &gone {
            let (doc, kept) = (index(&r["id"]), index(&r["duplicate_of"]));
            let j = jaccard(&texts[doc], &texts[kept]);
            assert!(j >= 0.4, "{doc} removed as a duplicate of {kept} at {j}");
            assert_eq!(format!("{j:.4}"), format!("{:.4}", r["jaccard"].as_f64().unwrap()));
        }
        let kept: Vec<usize> = dir
            .read("kept.jsonl")
            .lines()
            .map(|l| index(&serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]))
            .collect();
        assert_eq!(kept.len() + gone.len(), texts.len());
        for (i, &a) in kept.iter().enumerate() {
            for &b in &kept[i + 1..] {
                let j = jaccard(&texts[a], &texts[b]);
                // LSH may miss a pair near the threshold; well above it, never.
                assert!(j < 0.7, "kept {a} and {b} are near-duplicates ({j})");
            }
        }
    }
    // Components chain: some removal is below the threshold to its kept record.
    let run = dir.run(&[
        "dedup",
        "c.jsonl",
        "--mode",
        "components",
        "-o",
        "k2.jsonl",
        "--removed",
        "removed.jsonl",
    ]);
    run.code(0);
    let below = removed(&dir)
        .iter()
        .filter(|r| jaccard(&texts[index(&r["id"])], &texts[index(&r["duplicate_of"])]) < 0.4)
        .count();
    assert!(below > 0, "the chain did not chain");
    // The same with simhash: every removal is within k bits of its kept record.
    let fp = simhash_core::Fingerprinter::new();
    let run = dir.run(&[
        "dedup",
        "c.jsonl",
        "--method",
        "simhash",
        "-k",
        "12",
        "-o",
        "k3.jsonl",
        "--removed",
        "removed.jsonl",
    ]);
    run.code(0);
    let gone = removed(&dir);
    assert!(!gone.is_empty());
    for r in &gone {
        let (doc, kept) = (index(&r["id"]), index(&r["duplicate_of"]));
        let d =
            fp.fingerprint(&texts[doc]).unwrap().distance(fp.fingerprint(&texts[kept]).unwrap());
        assert!(d <= 12 && u64::from(d) == r["distance"].as_u64().unwrap(), "{r}");
    }
}

#[test]
fn simhash_walk_agrees_with_brute_force() {
    // Fingerprints around a few centres, exactly k and k+1 bits away, and copies.
    let dir = Dir::new();
    let mut rng = Rng(11);
    let k = 3u32;
    let mut fps = Vec::new();
    for c in 0..30u64 {
        let centre = rng.next();
        fps.push(centre);
        for _ in 0..rng.below(6) {
            let bits = rng.below(u64::from(k) + 3) as u32;
            let mut fp = centre;
            let mut flipped = 0;
            while flipped < bits {
                let bit = 1u64 << rng.below(64);
                if (fp ^ centre) & bit == 0 {
                    fp ^= bit;
                    flipped += 1;
                }
            }
            fps.push(fp);
        }
        if c % 5 == 0 {
            fps.push(centre);
        }
    }
    let mut tsv = String::from("id\thash\n");
    for (i, fp) in fps.iter().enumerate() {
        writeln!(tsv, "{i}\t{fp}").unwrap();
    }
    dir.write("h.tsv", &tsv);
    for keep in ["first", "lowest-id"] {
        for blocks in ["auto", "4", "8"] {
            let run = dir.run(&[
                "dedup",
                "h.tsv",
                "-k",
                "3",
                "--blocks",
                blocks,
                "--keep",
                keep,
                "--removed",
                "removed.jsonl",
                "-o",
                "kept.tsv",
            ]);
            run.code(0);
            // The oracle: in input order (ids are positions), keep unless a kept one is
            // within k bits; the first such kept one is the duplicate_of.
            let mut kept: Vec<usize> = Vec::new();
            let mut want = Vec::new();
            for (i, &fp) in fps.iter().enumerate() {
                match kept.iter().find(|&&j| (fps[j] ^ fp).count_ones() <= k) {
                    Some(&j) => want.push((i, j, (fps[j] ^ fp).count_ones())),
                    None => kept.push(i),
                }
            }
            let got: Vec<(usize, usize, u32)> = removed(&dir)
                .iter()
                .map(|r| {
                    let id = |v: &serde_json::Value| v.as_str().unwrap().parse::<usize>().unwrap();
                    (id(&r["id"]), id(&r["duplicate_of"]), r["distance"].as_u64().unwrap() as u32)
                })
                .collect();
            assert_eq!(got, want, "blocks {blocks}, keep {keep}");
        }
    }
}

#[test]
fn floods_collapse_and_big_clusters_are_named() {
    let dir = Dir::new();
    let mut jsonl = String::new();
    for i in 0..3000 {
        writeln!(
            jsonl,
            "{}",
            serde_json::json!({"id": format!("r{i}"), "text": "the same forty words ".repeat(10)})
        )
        .unwrap();
    }
    writeln!(
        jsonl,
        "{}",
        serde_json::json!({"id": "other", "text": "something else entirely, about ships"})
    )
    .unwrap();
    dir.write("flood.jsonl", &jsonl);
    for method in ["minhash", "simhash"] {
        for command in [vec!["dedup"], vec!["cluster", "--mode", "star"], vec!["cluster"]] {
            let mut args = command.clone();
            args.extend([
                "flood.jsonl",
                "--method",
                method,
                "-o",
                "out",
                "--stats",
                "s.json",
                "--big-cluster",
                "100",
            ]);
            let run = dir.run(&args);
            run.code(0);
            assert!(
                run.stderr.contains("warning: 1 cluster is larger than 100 records")
                    && run.stderr.contains("3000 records (kept: \"r0\")"),
                "{args:?}: {}",
                run.stderr
            );
            let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
            assert_eq!(s["largest_clusters"][0]["size"], 3000, "{args:?}");
            assert_eq!(s["largest_clusters"][0]["kept"], "r0");
            assert_eq!(s["exact_duplicates"], 2999, "{args:?}");
            if method == "minhash" {
                assert_eq!(s["verified"], 0, "identical documents are never compared");
            }
        }
        // pairs: one line a copy, with the first.
        let run = dir.run(&["pairs", "flood.jsonl", "--method", method, "-q"]);
        run.code(0);
        assert_eq!(run.stdout.lines().count(), 3000);
        assert!(run.stdout.lines().skip(1).all(|l| l.starts_with("r0\t")));
    }
    // The fork's top-level command line (components of its fingerprints).
    let run = dir.run(&[
        "--input",
        "flood.jsonl",
        "--format",
        "json",
        "--text_column=text",
        "--id_column=id",
        "--blocks",
        "5",
        "--distance",
        "3",
        "--output",
        "out.tsv",
        "--stats",
        "s.json",
    ]);
    run.code(0);
    let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(
        (s["exact_duplicates"].as_u64(), s["largest_cluster"].as_u64()),
        (Some(2999), Some(3000))
    );
    assert_eq!(dir.read("out.tsv").lines().count(), 3001);
    // find-clusters and find-all on identical hashes: one cluster, one line.
    let hashes = "12345\n".repeat(5000);
    let run = dir.run_bin("simhash-find-clusters", &["--distance", "3"], Some(hashes.as_bytes()));
    run.code(0);
    assert_eq!(run.stdout, format!("[{}]\n", vec!["12345"; 5000].join(",")));
    let run = dir.run_bin("simhash-find-all", &["--distance", "3"], Some(hashes.as_bytes()));
    run.code(0);
    assert_eq!(run.stdout, "[12345,12345]\n");
}

#[test]
fn different_one_word_documents_are_never_equal() {
    let dir = Dir::new();
    // Two records the old 32-bit shingle sets called identical, and many more one-word ones.
    let mut jsonl =
        String::from("{\"id\":1,\"text\":\"w93948\"}\n{\"id\":2,\"text\":\"w149114\"}\n");
    for i in 0..20_000 {
        writeln!(jsonl, "{{\"id\":\"x{i}\",\"text\":\"w{i}\"}}").unwrap();
    }
    dir.write("short.jsonl", &jsonl);
    let run =
        dir.run(&["dedup", "short.jsonl", "-q", "-o", "kept.jsonl", "--removed", "removed.jsonl"]);
    run.code(0);
    // Only the true copies go: "w93948"... appear once each, so nothing is removed.
    assert_eq!(dir.read("removed.jsonl"), "");
}

#[test]
// The hook that pauses the run between its passes exists in debug builds only.
#[cfg_attr(
    not(debug_assertions),
    ignore = "needs the debug build's SIMHASH_TEST_BETWEEN_PASSES hook"
)]
fn an_input_that_changes_between_passes_writes_nothing() {
    let dir = Dir::new();
    let mut jsonl = String::new();
    for i in 0..50 {
        writeln!(
            jsonl,
            "{}",
            serde_json::json!({"id": i, "text": format!("alpha{i} beta{i} gamma{i} delta{i}")})
        )
        .unwrap();
    }
    let input = dir.write("c.jsonl", &jsonl);
    let (child, marker) = dir.spawn_paused(&[
        "dedup",
        "c.jsonl",
        "-q",
        "-o",
        "kept.jsonl",
        "--removed",
        "removed.jsonl",
    ]);
    // The same size, one byte changed in a kept record.
    std::fs::write(&input, jsonl.replacen("alpha7 ", "alpha8 ", 1)).unwrap();
    std::fs::remove_file(&marker).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("c.jsonl:8: the input changed while it was read"), "{stderr}");
    assert!(!dir.path("kept.jsonl").exists() && !dir.path("removed.jsonl").exists());
}

/// Changes between the passes that the second pass, reading the kept records where the
/// first pass found them (or, compressed, the file again from its start), must notice:
/// each an error naming the first record affected, and nothing written. Growing the file
/// past its last record changes no record: the output is the same as without the change.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "needs the debug build's SIMHASH_TEST_BETWEEN_PASSES hook"
)]
fn every_change_between_passes_is_caught_where_the_records_are_read() {
    let mut jsonl = String::new();
    for i in 0..50 {
        let text = format!("alpha{i} beta{i} gamma{i} delta{i}");
        writeln!(jsonl, "{}", serde_json::json!({"id": i, "text": text})).unwrap();
    }
    // Where line `n` (1-based) starts, and the bytes of the first `n` lines.
    let start = |n: usize| jsonl.split_inclusive('\n').take(n - 1).map(str::len).sum::<usize>();
    let all_kept = jsonl.clone();
    let joined = {
        let mut s = jsonl.clone();
        s.replace_range(start(11) - 1..start(11), " ");
        s
    };
    let cases: Vec<(&str, bool, String, Option<&str>)> = vec![
        ("truncated before a record", false, jsonl[..start(21)].into(), Some("(line 21 is gone)")),
        ("cut inside a record", false, jsonl[..start(30) + 10].into(), Some("c.jsonl:30: ")),
        ("a line put first", false, format!("{{\"id\":99,\"text\":\"x\"}}\n{jsonl}"), Some(":1: ")),
        ("two lines joined", false, joined, Some("c.jsonl:10: ")),
        ("the last line longer", false, format!("{}x\n", jsonl.trim_end()), Some(":50: ")),
        ("a line added", false, format!("{jsonl}{{\"id\":99,\"text\":\"x\"}}\n"), None),
        ("gzip: a record changed", true, jsonl.replacen("alpha7 ", "alpha8 ", 1), Some(":8: ")),
        ("gzip: truncated", true, jsonl[..start(21)].into(), Some("(line 21 is gone)")),
    ];
    for (what, gzip, changed, error) in cases {
        let dir = Dir::new();
        let name = if gzip { "c.jsonl.gz" } else { "c.jsonl" };
        let compressed = |text: &str| {
            use std::io::Write as _;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text.as_bytes()).unwrap();
            gz.finish().unwrap()
        };
        let bytes = |text: &str| if gzip { compressed(text) } else { text.as_bytes().to_vec() };
        dir.write(name, bytes(&jsonl));
        let args = ["dedup", name, "-q", "-o", "kept.jsonl", "--removed", "removed.jsonl"];
        let (child, marker) = dir.spawn_paused(&args);
        dir.write(name, bytes(&changed));
        std::fs::remove_file(&marker).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some(error) = error {
            assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
            assert!(stderr.contains("the input changed while it was read"), "{what}: {stderr}");
            assert!(stderr.contains(error), "{what}: {stderr}");
            assert!(!dir.path("kept.jsonl").exists(), "{what}: nothing is written");
            assert!(!dir.path("removed.jsonl").exists(), "{what}: nothing is written");
        } else {
            assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
            assert_eq!(dir.read("kept.jsonl"), all_kept, "{what}");
        }
    }
}

/// The second pass reads each kept line where the first pass found it, up to where the next
/// record starts: the next record of the same file, never of the next file (here the
/// second file's first record starts further in than the first file's last one, which
/// would end it too early).
#[test]
fn a_kept_line_is_read_to_its_end_whatever_the_next_file_holds() {
    let dir = Dir::new();
    let record = |i: usize| {
        let text = format!("alpha{i} beta{i} gamma{i} delta{i} epsilon{i}");
        format!("{}\n", serde_json::json!({"id": i, "text": text}))
    };
    let a = format!("{}{}", record(1), record(2));
    let b = format!("{}\n{}", "x".repeat(a.len() - 5), record(3));
    dir.write("a.jsonl", &a);
    dir.write("b.jsonl", &b);
    for threads in ["1", "2"] {
        let run =
            dir.run(&["dedup", "a.jsonl", "b.jsonl", "-q", "-j", threads, "-o", "kept.jsonl"]);
        run.code(1);
        assert_eq!(dir.read("kept.jsonl"), format!("{a}{}", record(3)), "-j{threads}");
    }
}
