//! The index is never made over what is there: a directory that holds files but no MANIFEST
//! (an index whose manifest is lost, or anything else) and an index holding a segment of
//! another index are refused (exit 2) by every command, and nothing in them changes.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::{Dir, Rng, corpus};

/// Every file of `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let e = e.expect("entry");
            (e.file_name().into_string().expect("name"), std::fs::read(e.path()).expect("read"))
        })
        .collect()
}

/// `n` records with ids `r00`, `r01`, ... and random texts of 12 words.
fn records(n: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::new();
    for i in 0..n {
        let words: Vec<String> = (0..12).map(|_| format!("w{}", rng.below(5000))).collect();
        let text = words.join(" ");
        out.push_str(&serde_json::json!({"id": format!("r{i:02}"), "text": text}).to_string());
        out.push('\n');
    }
    out
}

#[test]
fn an_index_without_its_manifest_is_never_written_over() {
    let dir = Dir::new();
    dir.write("A.jsonl", records(30, 1));
    dir.write("B.jsonl", records(30, 2).replace("\"r", "\"b"));
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    dir.run(&["index", "add", "ix", "B.jsonl", "-q"]).code(0);
    let ix = dir.path("ix");
    std::fs::remove_file(ix.join("MANIFEST")).expect("rm MANIFEST");
    let before = snapshot(&ix);
    assert_eq!(before.keys().filter(|n| n.starts_with('g')).count(), 2, "{:?}", before.keys());
    let commands: [&[&str]; 8] = [
        &["dedup", "B.jsonl", "--against", "ix", "--update", "-o", "o.jsonl"],
        &["dedup", "B.jsonl", "--against", "ix", "-o", "o.jsonl"],
        &["index", "add", "ix", "B.jsonl"],
        &["index", "query", "ix", "B.jsonl", "-o", "o.tsv"],
        &["index", "compact", "ix"],
        &["index", "verify", "ix"],
        &["index", "stats", "ix"],
        &["index", "add", "ix", "B.jsonl", "--method", "simhash"],
    ];
    for args in commands {
        let run = dir.run(args);
        run.code(2);
        assert!(
            run.stderr.contains("no MANIFEST") && run.stderr.contains("ix"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(snapshot(&ix), before, "{args:?} changed the index directory");
    }
    assert!(!dir.path("o.jsonl").exists() && !dir.path("o.tsv").exists());

    // A directory of other files is not an index either, and gets no LOCK.
    std::fs::create_dir(dir.path("mine")).expect("mkdir");
    dir.write("mine/notes.txt", "keep");
    for args in [
        &["index", "add", "mine", "A.jsonl"][..],
        &["dedup", "A.jsonl", "--against", "mine", "--update", "-o", "o.jsonl"],
    ] {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains("notes.txt"), "{args:?}: {}", run.stderr);
        assert_eq!(snapshot(&dir.path("mine")).len(), 1, "{args:?}");
    }
    // `--update` makes a missing index directory, not its parents; an empty one is fine.
    let run = dir.run(&["dedup", "A.jsonl", "--against", "deep/ix", "--update", "-o", "o.jsonl"]);
    run.code(2);
    assert!(!dir.path("deep").exists());
    std::fs::create_dir(dir.path("empty")).expect("mkdir");
    for ix in ["new", "empty"] {
        dir.run(&["dedup", "A.jsonl", "--against", ix, "--update", "-o", &format!("{ix}.jsonl")])
            .code(0);
        dir.run(&["index", "verify", ix, "-q"]).code(0);
    }
}

#[test]
fn a_segment_of_another_index_is_refused() {
    let dir = Dir::new();
    dir.write("A.jsonl", records(30, 1));
    dir.write("B.jsonl", records(30, 2));
    dir.write("C.jsonl", records(5, 3).replace("\"r", "\"c"));
    let simhash = ["--method", "simhash", "-q"];
    dir.run(&[&["index", "add", "ix", "A.jsonl"][..], &simhash].concat()).code(0);
    dir.run(&[&["index", "add", "other", "B.jsonl"][..], &simhash].concat()).code(0);
    let name = "g00000001-0000.seg";
    let (ours, theirs) = (dir.path("ix").join(name), dir.path("other").join(name));
    let intact = std::fs::read(&ours).expect("segment");
    let foreign = std::fs::read(&theirs).expect("segment");
    assert_eq!(intact.len(), foreign.len(), "the same name and length");
    assert_ne!(intact, foreign);
    std::fs::write(&ours, &foreign).expect("copy");
    let before = snapshot(&dir.path("ix"));
    for args in [
        &["index", "query", "ix", "A.jsonl", "-o", "q.tsv"][..],
        &["index", "add", "ix", "C.jsonl"],
        &["index", "compact", "ix"],
        &["index", "verify", "ix"],
        &["dedup", "C.jsonl", "--against", "ix", "--update", "-o", "o.jsonl"],
    ] {
        let run = dir.run(args);
        run.code(2);
        assert!(
            run.stderr.contains(name) && run.stderr.contains("another index"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(snapshot(&dir.path("ix")), before, "{args:?} changed the index directory");
    }
    std::fs::write(&ours, &intact).expect("restore");
    dir.run(&["index", "verify", "ix", "-q"]).code(0);
}

/// `-k` other than a simhash index's is a settings mismatch naming `max_distance`, also
/// when it is not below the index's blocks (not a complaint about blocks).
#[test]
fn a_distance_other_than_the_index_s_is_a_settings_mismatch() {
    let dir = Dir::new();
    dir.write("A.jsonl", corpus(10, 2));
    let make = ["index", "add", "ix", "A.jsonl", "--method", "simhash", "-k", "3", "--blocks", "5"];
    dir.run(&make).code(0);
    for args in [
        &["index", "query", "ix", "A.jsonl", "-k", "5"][..],
        &["index", "add", "ix", "A.jsonl", "-k", "5"],
        &["dedup", "A.jsonl", "--against", "ix", "-k", "5", "-o", "o.jsonl"],
        &["dedup", "A.jsonl", "--against", "ix", "--update", "-k", "5", "-o", "o.jsonl"],
        &["index", "query", "ix", "A.jsonl", "-k", "4", "--blocks", "4"],
    ] {
        let run = dir.run(args);
        run.code(2);
        assert!(
            run.stderr.contains("the index was made with other settings")
                && run.stderr.contains("max_distance (index 3, given"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // The index's own value is fine.
    dir.run(&["index", "query", "ix", "A.jsonl", "-k", "3", "-q"]).code(0);
}
